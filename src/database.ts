// The whole database as Kysely sees it: every slice's tables, composed. A slice declares its own in tables.ts.

import type { ArtifactsTables } from './artifacts/tables.js';
import type { AuditTables } from './audit/tables.js';
import type { AutomationsTables } from './automations/tables.js';
import type { BudgetsTables } from './budgets/tables.js';
import type { EnvironmentsTables } from './environments/tables.js';
import type { ExecutionTables } from './execution/tables.js';
import type { FactoryTables } from './factory/tables.js';
import type { GitHubTables } from './github/tables.js';
import type { IdentitiesTables } from './identities/tables.js';
import type { McpTables } from './mcp/tables.js';
import type { MessagesTables } from './messages/tables.js';
import type { PlatformTables } from './platform/db/tables.js';
import type { RunnersTables } from './runners/tables.js';
import type { RunsTables } from './runs/tables.js';
import type { SchedulesTables } from './schedules/tables.js';
import type { ScoresTables } from './scores/tables.js';
import type { SecretsTables } from './secrets/tables.js';
import type { WebhooksTables } from './webhooks/tables.js';
import type { WorkersTables } from './workers/tables.js';

export interface DB
  extends PlatformTables,
    ArtifactsTables,
    AuditTables,
    BudgetsTables,
    GitHubTables,
    AutomationsTables,
    EnvironmentsTables,
    ExecutionTables,
    FactoryTables,
    IdentitiesTables,
    McpTables,
    RunnersTables,
    MessagesTables,
    SchedulesTables,
    ScoresTables,
    SecretsTables,
    RunsTables,
    WorkersTables,
    WebhooksTables {}
