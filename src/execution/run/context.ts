import type { FastifyBaseLogger } from 'fastify';
import type { GitHubAccess } from '../../github/index.js';
import type { ModelCatalogue } from '../../models/index.js';
import type { EgressProxy } from '../../network/index.js';
import type { Redactor } from '../../platform/redaction/redactor.js';
import type { RunLifecycle } from '../../runs/index.js';
import type { Harness } from '../harnesses/harness.js';
import type { SandboxMode } from '../sandbox/backend.js';
import type { WarmStarts } from '../warm/warm-start.js';
import type { Workspaces } from '../workspace/workspace.js';
import type { RunLedger } from './ledger.js';

/** Everything an execution needs around it, in a server's engine or in a self-hosted worker. */
export interface ExecutionContext {
  /** Who executes: an engine of a server, or a worker. */
  engineId: string;
  /** Where the execution's state, timeline, transcript and artifacts go. */
  ledger: RunLedger;
  log: FastifyBaseLogger;
  workspaces: Workspaces;
  /** Setup snapshots and warm starts (a server's engine under bwrap or the process sandbox); unset: always cold. */
  warm?: WarmStarts;
  harnesses: Map<string, Harness>;
  defaultHarness: string;
  /** The catalogue the built-in harnesses take their model (and the operator's key for it) from. */
  models?: ModelCatalogue;
  sandbox: SandboxMode;
  /**
   * Hangar's egress proxy (its own process, forked on first use), where the sandbox can confine a run to it
   * (capabilities.egressProxy): an environment's allow list is enforced through it. Unset: an allow list means no
   * network for its phase.
   */
  egress?: EgressProxy;
  /** USD for tokens of a catalogue model (undefined for a model it does not know), for harnesses that report tokens only. */
  price?: (modelId: string, inputTokens: number, outputTokens: number) => number | undefined;
  /** The spend cap of runs that set no `config.max_cost_usd` (HANGAR_RUN_DEFAULT_MAX_COST_USD). */
  defaultMaxCostUsd?: number;
  /**
   * Tokens for the repositories of runs whose team is linked to GitHub, and their pull requests: minted by the
   * server (a worker asks the server for its execution's).
   */
  github?: GitHubAccess;
  /** The secret values of the execution's run, replaced in its transcript (its ledger redacts the rest). */
  redactor?: Redactor;
}

/** A server's engine: it claims, keeps and takes back runs, and keeps debug windows, through the run lifecycle. */
export interface EngineContext extends ExecutionContext {
  lifecycle: RunLifecycle;
}
