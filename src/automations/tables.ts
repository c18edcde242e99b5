import type { ColumnType } from 'kysely';
import type { Json, NullableJson, Timestamp } from '../platform/db/columns.js';

export interface AutomationsTable {
  id: string;
  team_uid: string;
  factory_uid: string;
  name: string;
  prompt: string;
  enabled: boolean;
  agent_uid: string | null;
  agent_config: NullableJson<Record<string, unknown>>;
  triggers: Json<unknown[]>;
  webhook_uids: ColumnType<string[], string[] | undefined, string[]>;
  created_by_uid: string;
  updated_by_uid: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AutomationFiringsTable {
  /** The logged delivery that fired it; null for a GitHub App delivery (migration 0029). */
  delivery_seq: string | null;
  /** A GitHub App delivery's X-GitHub-Delivery and kind of event (mention, label, review). */
  github_delivery_id: ColumnType<string | null, string | null | undefined, never>;
  github_event: ColumnType<string | null, string | null | undefined, never>;
  automation_id: string;
  run_id: string | null;
  error: string | null;
  /** When the run was started (migration 0020); the overview counts firings in its window. */
  fired_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** The automations slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface AutomationsTables {
  automations: AutomationsTable;
  automation_firings: AutomationFiringsTable;
}
