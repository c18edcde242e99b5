import type { Kysely } from 'kysely';
import type {
  ArtifactResponse,
  ArtifactsService,
  ReportArtifactBody,
  RunExecution,
  UploadArtifactQuery,
} from '../../artifacts/index.js';
import type { DB } from '../../database.js';
import type { EnvironmentConfig } from '../../environments/index.js';
import type { ResolvedDefinition } from '../../mcp/index.js';
import type {
  Finish,
  FinishResult,
  FollowupInput,
  RunLifecycle,
  TimelineEvent,
  TranscriptRow,
  Transition,
  TransitionResult,
} from '../../runs/index.js';
import * as store from '../engine/store.js';
import type { TaskTokens } from '../engine/task-token.js';
import type { EngineWrites } from '../engine/writes.js';
import type { TranscriptLine } from '../harnesses/harness.js';

/** Where an execution's artifacts go: the artifacts slice in the server, its harness-support API from a worker. */
export interface ArtifactSink {
  report(run: RunExecution, body: ReportArtifactBody): Promise<ArtifactResponse>;
  upload(
    run: RunExecution,
    query: UploadArtifactQuery,
    bytes: Buffer,
    mediaType: string | undefined,
  ): Promise<ArtifactResponse>;
}

export type { FollowupInput };

/**
 * Everything an execution reads and writes outside its workspace. The engine of a server keeps it in the
 * database (DatabaseLedger); a self-hosted worker sends it to the server over its websocket (RemoteLedger), so
 * both run the same Execution. Every write names the execution and only lands while the run is still its.
 */
export interface RunLedger {
  transition(transition: Transition): Promise<TransitionResult>;
  events(runId: string, executionId: number, events: TimelineEvent[]): Promise<void>;
  transcript(rows: TranscriptRow[]): Promise<void>;
  finish(finish: Finish): Promise<FinishResult>;
  /**
   * Records the intent to start the agent, right before its harness is spawned (a takeback then never runs it twice),
   * and returns the follow-ups not yet given to it, oldest first, left where they are (the agent's start takes them,
   * see Transition.takeInputsUpTo). Absent where they cannot be read without taking them (a worker's link, which
   * records the start itself before the spawn).
   */
  beginAgentStart?(runId: string, executionId: number): Promise<FollowupInput[]>;
  /** Follow-ups not yet given to the agent, oldest first; they count as delivered from now on. */
  takeFollowups(runId: string, executionId: number): Promise<FollowupInput[]>;
  /** Follow-ups that could not be written to the harness after all: the next execution takes them. */
  returnFollowups(runId: string, executionId: number, seqs: string[]): Promise<void>;
  /** The agent never started and this executor is going away: the run goes back to the queue. */
  requeue(runId: string, executionId: number, reason: string): Promise<void>;
  /** After a cancel stopped the harness: the run no longer has a sandbox. */
  clearSandboxIfCancelled(runId: string, executionId: number): Promise<void>;
  /** What the execution has used so far (priced): the run's request_usage while it runs, so budgets count it. */
  usage(runId: string, executionId: number, usage: Record<string, number>): Promise<void>;
  /** What the run's earlier executions used, summed (null for its first): a continued run's cap counts it. */
  usageBefore(runId: string): Promise<Record<string, number> | null>;
  /** The transcript of the conversation's earlier executions, for a harness to resume it. */
  history(conversationId: string, runId: string, executionId: number): Promise<TranscriptLine[]>;
  environment(teamUid: string, environmentId: string, runId: string): Promise<EnvironmentConfig | undefined>;
  /** The files that come with the run, for its workspace. */
  attachments(runId: string): Promise<store.RunFile[]>;
  recordSetupResult(environmentId: string, failed: boolean, runId: string, executionId: number): Promise<void>;
  /** Run-scoped variables for the harness: run ID, API base URL, task token. */
  variables(runId: string, executionId: number): Record<string, string>;
  /** A team secret the run's `harness_auth_secrets` names (the harness's API key); undefined when it does not exist. */
  authSecret(teamUid: string, runId: string, name: string): Promise<string | undefined>;
  /**
   * The value of the environment's registry secret (registry_secret_name), from the team that owns the environment:
   * a shared environment's image is pulled with its owner's credentials, never a guest's (issue 47.3a). Undefined when
   * the environment names none or the secret does not exist.
   */
  registrySecret(teamUid: string, environmentId: string, runId: string): Promise<string | undefined>;
  /** A registered MCP server the run names by `warp_id`, with its secrets filled in; throws when it cannot be used. */
  mcpServer(teamUid: string, runId: string, uid: string): Promise<ResolvedDefinition>;
  artifacts: ArtifactSink;
  maxArtifactBytes: number;
}

/** What the environments slice gives the engine. */
export interface EnvironmentSetups {
  setupFor(teamUid: string, uid: string): Promise<EnvironmentConfig | undefined>;
  recordSetupResult(uid: string, failed: boolean): Promise<void>;
  /** The environment's registry secret and the team it is resolved in (its owner's); undefined when none. */
  registrySecretFor(teamUid: string, uid: string): Promise<{ teamUid: string; name: string } | undefined>;
}

/** The ledger of the server's own engine: the database, through the engine's batched writes. */
export class DatabaseLedger implements RunLedger {
  constructor(
    private readonly options: {
      /** For reads: a run's files and its conversation's history. */
      db: Kysely<DB>;
      lifecycle: RunLifecycle;
      engineId: string;
      writes: EngineWrites;
      environments: EnvironmentSetups;
      tokens: TaskTokens;
      /** Base of the API as a harness reaches it, e.g. http://127.0.0.1:8080/api/v1 (known once the server listens). */
      apiUrl: () => string;
      artifacts: ArtifactsService;
      maxArtifactBytes: number;
      readSecret: (teamUid: string, name: string) => Promise<string | null>;
      mcpServer: (teamUid: string, uid: string) => Promise<ResolvedDefinition>;
    },
  ) {}

  /** The artifacts a harness reports, recorded with the same retries as the other writes of an execution. */
  get artifacts(): ArtifactSink {
    const { artifacts, writes } = this.options;
    return {
      report: (run, body) => writes.retrying(() => artifacts.report(run, body)),
      upload: (run, query, bytes, mediaType) => writes.retrying(() => artifacts.upload(run, query, bytes, mediaType)),
    };
  }

  get maxArtifactBytes(): number {
    return this.options.maxArtifactBytes;
  }

  transition(transition: Transition) {
    return this.options.writes.transition(transition);
  }

  events(runId: string, executionId: number, events: TimelineEvent[]) {
    return this.options.writes.events(runId, executionId, events);
  }

  transcript(rows: TranscriptRow[]) {
    return this.options.writes.transcript(rows);
  }

  finish(finish: Finish) {
    return this.options.writes.finish(finish);
  }

  // Batched with the engine's other executions' starts by the engine's writes, which every run's ledger shares. Not
  // a field of this ledger's: each run writes through a redacting ledger made with Object.create over this one, and a
  // field set through it (`this.starts ??= ...`) was set on the run's own object, so every run had a batcher of its
  // own and each start cost a statement (1.00 per run in the dispatch drain).
  beginAgentStart(runId: string, executionId: number) {
    return this.options.writes.beginAgentStart(runId, executionId);
  }

  takeFollowups(runId: string) {
    return this.options.lifecycle.takeInputs(runId, 'agent');
  }

  returnFollowups(runId: string, _executionId: number, seqs: string[]) {
    return this.options.lifecycle.returnInputs(runId, seqs);
  }

  // The other writes of an execution's end, tried again across a database outage like the batched ones (both
  // are conditional on the run still being this engine's).
  requeue(runId: string, executionId: number, reason: string) {
    const { lifecycle, engineId, writes } = this.options;
    return writes.retrying(() => lifecycle.requeue({ id: runId, owner: engineId, executionId }, reason));
  }

  clearSandboxIfCancelled(runId: string, executionId: number) {
    const { lifecycle, engineId, writes } = this.options;
    return writes.retrying(() => lifecycle.clearSandboxIfCancelled(engineId, runId, executionId));
  }

  usage(runId: string, executionId: number, usage: Record<string, number>) {
    const { lifecycle, engineId } = this.options;
    return lifecycle.recordUsage(engineId, runId, executionId, usage);
  }

  usageBefore(runId: string) {
    return store.usageBefore(this.options.db, runId);
  }

  async history(conversationId: string, runId: string, executionId: number): Promise<TranscriptLine[]> {
    const rows = await store.conversationHistory(this.options.db, conversationId, runId, executionId);
    return rows.map((entry) => ({
      executionId: entry.execution_id,
      stream: entry.stream,
      line: entry.line,
      at: entry.at,
    }));
  }

  environment(teamUid: string, environmentId: string) {
    return this.options.environments.setupFor(teamUid, environmentId);
  }

  attachments(runId: string) {
    return store.runAttachments(this.options.db, runId);
  }

  recordSetupResult(environmentId: string, failed: boolean) {
    return this.options.environments.recordSetupResult(environmentId, failed);
  }

  async authSecret(teamUid: string, _runId: string, name: string): Promise<string | undefined> {
    return (await this.options.readSecret(teamUid, name)) ?? undefined;
  }

  async registrySecret(teamUid: string, environmentId: string): Promise<string | undefined> {
    const secret = await this.options.environments.registrySecretFor(teamUid, environmentId);
    return secret ? ((await this.options.readSecret(secret.teamUid, secret.name)) ?? undefined) : undefined;
  }

  mcpServer(teamUid: string, _runId: string, uid: string): Promise<ResolvedDefinition> {
    return this.options.mcpServer(teamUid, uid);
  }

  variables(runId: string, executionId: number): Record<string, string> {
    return runVariables(this.options.tokens, this.options.apiUrl(), runId, executionId);
  }
}

/** The run-scoped variables a harness gets (a worker gets them with its assignment): run, API base, task token. */
export function runVariables(
  tokens: TaskTokens,
  apiUrl: string,
  runId: string,
  executionId: number,
): Record<string, string> {
  return {
    HANGAR_RUN_ID: runId,
    HANGAR_EXECUTION_ID: String(executionId),
    HANGAR_API_URL: apiUrl,
    HANGAR_TASK_TOKEN: tokens.issue(runId, executionId),
  };
}
