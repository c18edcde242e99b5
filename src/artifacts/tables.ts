import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../platform/db/columns.js';

export interface ArtifactsTable {
  uid: string;
  run_id: string;
  team_uid: string;
  artifact_type: string;
  data: Json<Record<string, unknown>>;
  is_public: Generated<boolean>;
  created_at: Timestamp;
  execution_id: number | null;
  blob_key: string | null;
  content_type: string | null;
  size_bytes: string | null;
  canonical_url: string | null;
}

/** The artifacts slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface ArtifactsTables {
  artifacts: ArtifactsTable;
}
