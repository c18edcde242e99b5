import type { FastifyBaseLogger } from 'fastify';
import type { ArtifactsService } from '../artifacts/service.js';
import type { Kysely } from 'kysely';
import type { EnvironmentConfig } from '../environments/schemas.js';
import type { DB } from '../platform/db/schema.js';
import type { Harness } from './harnesses/harness.js';
import type { SandboxMode } from './sandbox/types.js';
import type { TaskTokens } from './task-token.js';
import type { Workspaces } from './workspace.js';
import type { EngineWrites } from './writes.js';

/** What the environments slice gives the engine. */
export interface EnvironmentSetups {
  setupFor(teamUid: string, uid: string): Promise<EnvironmentConfig | undefined>;
  recordSetupResult(uid: string, failed: boolean): Promise<void>;
}

/** Everything an execution needs from the engine around it. */
export interface EngineContext {
  db: Kysely<DB>;
  engineId: string;
  /** The engine's batched writes (transitions, events, transcript, ends). */
  writes: EngineWrites;
  /** Where the artifacts a harness reports go. */
  artifacts: ArtifactsService;
  maxArtifactBytes: number;
  log: FastifyBaseLogger;
  workspaces: Workspaces;
  harnesses: Map<string, Harness>;
  defaultHarness: string | undefined;
  environments: EnvironmentSetups;
  tokens: TaskTokens;
  /** Base of the API as a harness reaches it, e.g. http://127.0.0.1:8080/api/v1 (known once the server listens). */
  apiUrl: () => string;
  sandbox: SandboxMode;
}

/** The variables every harness process gets for its run (besides the scrubbed allowlist). */
export function runVariables(context: EngineContext, runId: string, executionId: number): Record<string, string> {
  return {
    HANGAR_RUN_ID: runId,
    HANGAR_EXECUTION_ID: String(executionId),
    HANGAR_API_URL: context.apiUrl(),
    HANGAR_TASK_TOKEN: context.tokens.issue(runId, executionId),
  };
}
