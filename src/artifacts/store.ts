import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { type Visibility, visible } from '../runs/index.js';
import type { ArtifactType } from './schemas.js';

/** Queries of the artifacts slice. Artifacts belong to runs: who may read a private one is who may see its run. */

export interface NewArtifact {
  uid: string;
  run_id: string;
  team_uid: string;
  execution_id: number;
  artifact_type: ArtifactType;
  data: Record<string, unknown>;
  is_public: boolean;
  blob_key: string | null;
  content_type: string | null;
  size_bytes: number | null;
  canonical_url: string | null;
}

export interface StoredArtifact {
  uid: string;
  run_id: string;
  team_uid: string;
  artifact_type: ArtifactType;
  data: Record<string, unknown>;
  is_public: boolean;
  blob_key: string | null;
  content_type: string | null;
  size_bytes: string | null;
  created_at: Date;
}

export async function insertArtifact(db: Kysely<DB>, artifact: NewArtifact): Promise<Date> {
  const row = await db
    .insertInto('artifacts')
    .values({
      ...artifact,
      data: JSON.stringify(artifact.data),
      size_bytes: artifact.size_bytes === null ? null : String(artifact.size_bytes),
    })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  return row.created_at;
}

const ARTIFACT_COLUMNS = [
  'artifacts.uid',
  'artifacts.run_id',
  'artifacts.team_uid',
  'artifacts.artifact_type',
  'artifacts.data',
  'artifacts.is_public',
  'artifacts.blob_key',
  'artifacts.content_type',
  'artifacts.size_bytes',
  'artifacts.created_at',
] as const;

export async function findArtifact(db: Kysely<DB>, uid: string): Promise<StoredArtifact | undefined> {
  return (await db
    .selectFrom('artifacts')
    .select(ARTIFACT_COLUMNS)
    .where('artifacts.uid', '=', uid)
    .executeTakeFirst()) as StoredArtifact | undefined;
}

/** The team of a run whose execution `executionId` has a live sandbox right now, or undefined. */
export async function executingRunTeam(
  db: Kysely<DB>,
  runId: string,
  executionId: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('runs')
    .select('team_uid')
    .where('id', '=', runId)
    .where('execution_id', '=', executionId)
    .where('sandbox_running', '=', true)
    .executeTakeFirst();
  return row?.team_uid;
}

/** The newest run visible to the caller that reported this canonical pull request or ticket address. */
export async function runByCanonicalUrl(
  db: Kysely<DB>,
  who: Visibility,
  canonicalUrl: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('artifacts')
    .innerJoin('runs', 'runs.id', 'artifacts.run_id')
    .select('runs.id')
    .where('artifacts.team_uid', '=', who.teamUid)
    .where('artifacts.canonical_url', '=', canonicalUrl)
    .where((eb) => visible(eb, who))
    .orderBy('artifacts.created_at', 'desc')
    .orderBy(sql`artifacts.uid`, 'desc')
    .executeTakeFirst();
  return row?.id;
}

/** Records an address the run answers to (the issue that started it), found by the external-reference lookup. */
export async function insertExternalReference(
  db: Kysely<DB>,
  reference: { uid: string; runId: string; teamUid: string; url: string; canonicalUrl: string },
): Promise<void> {
  await db
    .insertInto('artifacts')
    .values({
      uid: reference.uid,
      run_id: reference.runId,
      team_uid: reference.teamUid,
      execution_id: null as never,
      artifact_type: 'EXTERNAL_REFERENCE',
      data: JSON.stringify({ url: reference.url }),
      is_public: false,
      blob_key: null,
      content_type: null,
      size_bytes: null,
      canonical_url: reference.canonicalUrl,
    })
    .execute();
}

/** Each run's latest pull request (its PULL_REQUEST artifact's address), for those of `runIds` that opened one. */
export async function pullRequestUrls(db: Kysely<DB>, runIds: readonly string[]): Promise<Map<string, string>> {
  if (runIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('artifacts')
    .select(['run_id', 'data'])
    .where('run_id', 'in', [...runIds])
    .where('artifact_type', '=', 'PULL_REQUEST')
    .orderBy('created_at')
    .execute();
  const urls = new Map<string, string>();
  for (const row of rows) {
    const data = (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as { url?: unknown } | null;
    // Later rows replace earlier ones: the latest wins.
    if (typeof data?.url === 'string') urls.set(row.run_id, data.url);
  }
  return urls;
}
