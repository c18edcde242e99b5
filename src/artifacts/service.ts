import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { DB } from '../database.js';
import type { Caller, Principal } from '../identities/index.js';
import type { BlobStore } from '../platform/blobs/store.js';
import { authenticationRequired, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { schemaProblem } from '../platform/schema-problem.js';
import type { UrlSigner } from '../platform/signed-urls.js';
import { rfc3339 } from '../platform/time.js';
// Known reaches into the runs and execution slices, which build on this one: the composition root is to pass
// ArtifactsService a run port instead (see .dependency-cruiser.cjs, KNOWN_REACHES).
import { progressPayload, type RunLifecycle, runExists } from '../runs/index.js';
import { canonicalUrl } from './canonical-url.js';
import {
  type ArtifactResponse,
  type ArtifactType,
  ExternalReferenceData,
  PlanData,
  type ProgressBody,
  PullRequestData,
  type ReportArtifactBody,
  type UploadArtifactQuery,
} from './schemas.js';
import * as store from './store.js';

/** How long a download link works. */
export const DOWNLOAD_LINK_SECONDS = 10 * 60;

/** The execution a harness-support call comes from (its task token named it, and it is running). */
export interface RunExecution {
  runId: string;
  executionId: number;
  teamUid: string;
}

/**
 * Who reads an artifact: an authenticated principal, or nobody (public artifacts only). The artifact names its
 * team, so a member of several teams needs no team header to read it.
 */
export type Reader = Principal | null;

export interface ArtifactsOptions {
  db: Kysely<DB>;
  /** Progress notes go on the run's timeline. */
  lifecycle: RunLifecycle;
  blobs: BlobStore;
  signer: UrlSigner;
  /** Base of the API as clients reach it, e.g. https://hangar.example/api/v1. */
  apiUrl: () => string;
}

const checkers = {
  PLAN: Compile(PlanData),
  PULL_REQUEST: Compile(PullRequestData),
  EXTERNAL_REFERENCE: Compile(ExternalReferenceData),
} as const;

function validated<T extends TSchema>(type: keyof typeof checkers, data: unknown): Static<T> {
  const check = checkers[type];
  if (!check.Check(data)) throw invalidRequest(`${type}: ${schemaProblem(check, data, 'data')}`);
  return data as Static<T>;
}

function requireHttpUrl(url: string): string {
  const canonical = canonicalUrl(url);
  if (!canonical)
    throw invalidRequest(`data.url: must be an http or https address without credentials, got "${url.slice(0, 100)}"`);
  return canonical;
}

/**
 * Artifacts: what running agents report (through the harness-support calls or the harness protocol), and what
 * people read and download. Bytes go to the blob store; downloads are signed, short-lived links.
 */
export class ArtifactsService {
  constructor(private readonly options: ArtifactsOptions) {}

  /** The execution a task token names, if that execution is running now (401 otherwise). */
  async executing(claim: { runId: string; executionId: number } | null): Promise<RunExecution> {
    if (!claim) throw authenticationRequired('harness-support calls need the task token of a running execution');
    const teamUid = await store.executingRunTeam(this.options.db, claim.runId, claim.executionId);
    if (!teamUid) throw authenticationRequired('this task token belongs to an execution that is not running');
    return { ...claim, teamUid };
  }

  /** A progress note of the running execution, on its timeline as `agent_progress`. */
  async reportProgress(run: RunExecution, progress: ProgressBody): Promise<void> {
    await this.options.lifecycle.event(run.runId, run.executionId, 'agent_progress', progressPayload(progress));
  }

  /** PLAN, PULL_REQUEST and EXTERNAL_REFERENCE artifacts, described by their data. */
  async report(run: RunExecution, body: ReportArtifactBody): Promise<ArtifactResponse> {
    const uid = randomUUID();
    const base = {
      uid,
      run_id: run.runId,
      team_uid: run.teamUid,
      execution_id: run.executionId,
      is_public: body.visibility === 'public',
    };
    switch (body.artifact_type) {
      case 'PLAN': {
        const plan = validated<typeof PlanData>('PLAN', body.data);
        const bytes = Buffer.from(plan.content, 'utf8');
        const blobKey = `artifacts/${uid}`;
        await this.options.blobs.put(blobKey, bytes);
        const data = {
          document_uid: uid,
          artifact_uid: uid,
          title: plan.title,
          url: `${this.options.apiUrl()}/agent/artifacts/${uid}`,
        };
        const contentType = plan.content_type ?? 'text/markdown; charset=utf-8';
        return this.insert({
          ...base,
          artifact_type: 'PLAN',
          data,
          blob_key: blobKey,
          content_type: contentType,
          size_bytes: bytes.length,
          canonical_url: null,
        });
      }
      case 'PULL_REQUEST': {
        const pr = validated<typeof PullRequestData>('PULL_REQUEST', body.data);
        const url = requireHttpUrl(pr.url);
        return this.insert({
          ...base,
          artifact_type: 'PULL_REQUEST',
          data: { ...pr, url },
          blob_key: null,
          content_type: null,
          size_bytes: null,
          canonical_url: url,
        });
      }
      case 'EXTERNAL_REFERENCE': {
        const reference = validated<typeof ExternalReferenceData>('EXTERNAL_REFERENCE', body.data);
        const url = requireHttpUrl(reference.url);
        const data = { ...reference, url };
        return this.insert({
          ...base,
          artifact_type: 'EXTERNAL_REFERENCE',
          data,
          blob_key: null,
          content_type: null,
          size_bytes: null,
          canonical_url: url,
        });
      }
      default:
        throw invalidRequest(
          `${body.artifact_type} artifacts carry bytes: upload them with POST /harness-support/upload-artifact`,
        );
    }
  }

  /** FILE and SCREENSHOT artifacts: the bytes, with what the query says about them. */
  async upload(
    run: RunExecution,
    query: UploadArtifactQuery,
    bytes: Buffer,
    mediaType: string | undefined,
  ): Promise<ArtifactResponse> {
    const mimeType =
      (mediaType ?? 'application/octet-stream').split(';')[0]!.trim().toLowerCase() || 'application/octet-stream';
    if (query.artifact_type === 'FILE' && !query.filename)
      throw invalidRequest('filename: required for FILE artifacts');
    if (query.artifact_type === 'SCREENSHOT' && !mimeType.startsWith('image/')) {
      throw invalidRequest(`a SCREENSHOT must be an image (Content-Type image/...), got ${mimeType}`);
    }
    const uid = randomUUID();
    const blobKey = `artifacts/${uid}`;
    await this.options.blobs.put(blobKey, bytes);
    const description = query.description ?? '';
    const data =
      query.artifact_type === 'FILE'
        ? {
            artifact_uid: uid,
            filename: query.filename!,
            filepath: query.filepath ?? query.filename!,
            mime_type: mimeType,
            description,
            size_bytes: bytes.length,
          }
        : { artifact_uid: uid, mime_type: mimeType, description };
    return this.insert({
      uid,
      run_id: run.runId,
      team_uid: run.teamUid,
      execution_id: run.executionId,
      artifact_type: query.artifact_type,
      data,
      is_public: query.visibility === 'public',
      blob_key: blobKey,
      content_type: mimeType,
      size_bytes: bytes.length,
      canonical_url: null,
    });
  }

  private async insert(artifact: store.NewArtifact): Promise<ArtifactResponse> {
    const createdAt = await store.insertArtifact(this.options.db, artifact);
    return {
      artifact_uid: artifact.uid,
      artifact_type: artifact.artifact_type,
      created_at: rfc3339(createdAt),
      data: artifact.data,
    };
  }

  /** An artifact the reader may see: public ones for anyone, private ones for who may see the run. */
  private async readable(reader: Reader, uid: string): Promise<store.StoredArtifact> {
    const artifact = /^[0-9a-f-]{36}$/i.test(uid)
      ? await store.findArtifact(this.options.db, uid.toLowerCase())
      : undefined;
    if (!artifact) throw notFound(`artifact ${uid} not found`);
    if (artifact.is_public) return artifact;
    if (!reader) throw authenticationRequired('this artifact is private: send an API key of its team');
    if (!reader.memberships.some((membership) => membership.team_uid === artifact.team_uid))
      throw notFound(`artifact ${uid} not found`);
    const runVisible = await runExists(
      this.options.db,
      { teamUid: artifact.team_uid, principalUid: reader.uid },
      artifact.run_id,
    );
    if (!runVisible) throw notAuthorized('this artifact belongs to a personal run of another member of the team');
    return artifact;
  }

  async get(reader: Reader, uid: string): Promise<ArtifactResponse> {
    const artifact = await this.readable(reader, uid);
    const data: Record<string, unknown> = { ...artifact.data };
    if (artifact.artifact_type === 'PLAN') {
      const content = artifact.blob_key ? await this.options.blobs.read(artifact.blob_key) : null;
      data.content = content?.toString('utf8') ?? '';
      data.content_type = artifact.content_type ?? 'text/markdown; charset=utf-8';
    } else if (isFileLike(artifact.artifact_type)) {
      const link = this.link(artifact.uid);
      data.download_url = link.url;
      data.expires_at = rfc3339(link.expiresAt);
      data.content_type = artifact.content_type;
      if (artifact.artifact_type === 'FILE') data.size_bytes = Number(artifact.size_bytes);
      // The workspace layout is the team's business, not an anonymous reader's.
      if (!reader) delete data.filepath;
    }
    return {
      artifact_uid: artifact.uid,
      artifact_type: artifact.artifact_type,
      created_at: rfc3339(artifact.created_at),
      data,
    };
  }

  /** A signed link to the artifact's bytes (FILE, SCREENSHOT, and the text of a PLAN). */
  async downloadLink(reader: Reader, uid: string): Promise<string> {
    const artifact = await this.readable(reader, uid);
    if (!artifact.blob_key)
      throw invalidRequest(
        `a ${artifact.artifact_type} artifact has nothing to download; read it with GET /agent/artifacts/${uid}`,
      );
    return this.link(artifact.uid).url;
  }

  private link(uid: string) {
    return this.options.signer.sign(downloadPath(uid), DOWNLOAD_LINK_SECONDS);
  }

  /** The bytes behind a signed link (the route checked the signature, which covers the artifact id). */
  async openDownload(
    uid: string,
  ): Promise<{ stream: Readable; contentType: string; filename: string; size: number | null }> {
    const artifact = await store.findArtifact(this.options.db, uid);
    const stream = artifact?.blob_key ? await this.options.blobs.open(artifact.blob_key) : null;
    if (!artifact || !stream) throw notFound(`artifact ${uid} has no download`);
    const filename =
      typeof artifact.data.filename === 'string'
        ? artifact.data.filename
        : `${artifact.artifact_type.toLowerCase()}-${uid}`;
    return {
      stream,
      contentType: artifact.content_type ?? 'application/octet-stream',
      filename,
      size: artifact.size_bytes === null ? null : Number(artifact.size_bytes),
    };
  }

  /** The run that reported a pull request or ticket address, compared in canonical form (404 when none is visible). */
  /**
   * Makes `url` (an issue that started the run) find the run through the external-reference lookup; `db` is the
   * transaction that creates the run, when there is one.
   */
  async recordExternalReference(runId: string, teamUid: string, url: string, db = this.options.db): Promise<void> {
    const canonical = canonicalUrl(url);
    if (!canonical) throw invalidRequest('url: must be an http or https address');
    await store.insertExternalReference(db, {
      uid: randomUUID(),
      runId,
      teamUid,
      url,
      canonicalUrl: canonical,
    });
  }

  async runByExternalReference(caller: Caller, url: string): Promise<{ run_id: string }> {
    const canonical = canonicalUrl(url);
    if (!canonical) throw invalidRequest('url: must be an http or https address');
    const runId = await store.runByCanonicalUrl(
      this.options.db,
      { teamUid: caller.teamUid, principalUid: caller.principal.uid },
      canonical,
    );
    if (!runId) throw notFound('no run you can see reported this address');
    return { run_id: runId };
  }
}

export function downloadPath(uid: string): string {
  return `/api/v1/downloads/artifacts/${uid}`;
}

function isFileLike(type: ArtifactType): boolean {
  return type === 'FILE' || type === 'SCREENSHOT';
}
