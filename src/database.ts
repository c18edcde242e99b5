// The whole database as Kysely sees it: every slice's tables, composed. A slice declares its own in tables.ts.
import type { PlatformTables } from './platform/db/tables.js';
import type {
  RunsTable,
  RunAttachmentsTable,
  RunEventsTable,
  RunInputsTable,
  RunTranscriptTable,
  WorkerConnectionsTable,
  WorkerKeysTable,
  WorkerSkillsTable,
} from './platform/db/run-tables.js';
import type { ArtifactsTables } from './artifacts/tables.js';
import type { AutomationsTables } from './automations/tables.js';
import type { EnvironmentsTables } from './environments/tables.js';
import type { FactoryTables } from './factory/tables.js';
import type { IdentitiesTables } from './identities/tables.js';
import type { McpTables } from './mcp/tables.js';
import type { SchedulesTables } from './schedules/tables.js';
import type { ScoresTables } from './scores/tables.js';
import type { SecretsTables } from './secrets/tables.js';
import type { WebhooksTables } from './webhooks/tables.js';

export interface DB
  extends PlatformTables,
    ArtifactsTables,
    AutomationsTables,
    EnvironmentsTables,
    FactoryTables,
    IdentitiesTables,
    McpTables,
    SchedulesTables,
    ScoresTables,
    SecretsTables,
    WebhooksTables {
  // The runs, execution and workers tables, until the run lifecycle move declares them in those slices.
  runs: RunsTable;
  run_attachments: RunAttachmentsTable;
  run_events: RunEventsTable;
  run_inputs: RunInputsTable;
  run_transcript: RunTranscriptTable;
  worker_connections: WorkerConnectionsTable;
  worker_keys: WorkerKeysTable;
  worker_skills: WorkerSkillsTable;
}
