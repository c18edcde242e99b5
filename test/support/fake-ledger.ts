// An in-memory RunLedger and the RunScope of one execution over it: the phase runner's unit tests
// (src/execution/run/phases/*.test.ts) check what each phase writes without a database. Every write is kept in
// `writes`, in order; what the ledger answers is set on the fake before the phase runs.

import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { EnvironmentConfig } from '../../src/environments/index.js';
import type { ExecutionContext } from '../../src/execution/run/context.js';
import type { FollowupInput, RunLedger } from '../../src/execution/run/ledger.js';
import type { RunScope } from '../../src/execution/run/phases/types.js';
import { RunRecord } from '../../src/execution/run/record.js';
import { Redactor } from '../../src/platform/redaction/redactor.js';
import type { ClaimedRun, Finish, FinishResult, TimelineEvent, Transition } from '../../src/runs/index.js';

export type LedgerWrite =
  | { kind: 'transition'; transition: Transition }
  | { kind: 'events'; events: TimelineEvent[] }
  | { kind: 'transcript'; lines: number }
  | { kind: 'finish'; finish: Finish }
  | { kind: 'beginAgentStart' }
  | { kind: 'requeue'; reason: string }
  | { kind: 'clearSandboxIfCancelled' }
  | { kind: 'recordSetupResult'; failed: boolean }
  | { kind: 'usage'; usage: Record<string, number> };

export class FakeLedger implements RunLedger {
  readonly writes: LedgerWrite[] = [];
  /** Whether the run is still the execution's: false answers every transition `moved: false`. */
  moves = true;
  finishResult: FinishResult = 'ended';
  environments = new Map<string, EnvironmentConfig>();
  followups: FollowupInput[] = [];
  secrets = new Map<string, string>();
  maxArtifactBytes = 1024 * 1024;
  /** Set to undefined to be a worker's link, which records the agent's start before the spawn. */
  beginAgentStart?: RunLedger['beginAgentStart'] = async () => {
    this.writes.push({ kind: 'beginAgentStart' });
    return this.followups;
  };

  /** The writes of one kind, in order. */
  of<K extends LedgerWrite['kind']>(kind: K): Array<Extract<LedgerWrite, { kind: K }>> {
    return this.writes.filter((write): write is Extract<LedgerWrite, { kind: K }> => write.kind === kind);
  }

  /** Every timeline event type written, by whatever write carried it, in order. */
  eventTypes(): string[] {
    return this.writes.flatMap((write) => {
      if (write.kind === 'events') return write.events.map((event) => event.type);
      if (write.kind === 'transition') return write.transition.events.map((event) => event.type);
      if (write.kind === 'finish') return write.finish.before.map((event) => event.type);
      return [];
    });
  }

  async transition(transition: Transition) {
    this.writes.push({ kind: 'transition', transition });
    return { moved: this.moves, inputs: this.moves ? this.followups.map((input) => input.message) : [] };
  }
  async events(_runId: string, _executionId: number, events: TimelineEvent[]) {
    this.writes.push({ kind: 'events', events });
  }
  async transcript(rows: unknown[]) {
    this.writes.push({ kind: 'transcript', lines: rows.length });
  }
  async finish(finish: Finish) {
    this.writes.push({ kind: 'finish', finish });
    return this.finishResult;
  }
  async takeFollowups() {
    const taken = this.followups;
    this.followups = [];
    return taken;
  }
  async returnFollowups() {}
  async requeue(_runId: string, _executionId: number, reason: string) {
    this.writes.push({ kind: 'requeue', reason });
  }
  async clearSandboxIfCancelled() {
    this.writes.push({ kind: 'clearSandboxIfCancelled' });
  }
  async usage(_runId: string, _executionId: number, usage: Record<string, number>) {
    this.writes.push({ kind: 'usage', usage });
  }
  async usageBefore() {
    return null;
  }
  async history() {
    return [];
  }
  async environment(_teamUid: string, environmentId: string) {
    return this.environments.get(environmentId);
  }
  async attachments() {
    return [];
  }
  async recordSetupResult(_environmentId: string, failed: boolean) {
    this.writes.push({ kind: 'recordSetupResult', failed });
  }
  variables(runId: string, executionId: number) {
    return { HANGAR_RUN_ID: runId, HANGAR_EXECUTION_ID: String(executionId) };
  }
  async authSecret(_teamUid: string, _runId: string, name: string) {
    return this.secrets.get(name);
  }
  async registrySecret() {
    return this.secrets.get('registry');
  }
  async mcpServer(): Promise<never> {
    throw new Error('no MCP servers in the fake ledger');
  }
  artifacts = {
    report: async () => {
      throw new Error('no artifacts in the fake ledger');
    },
    upload: async () => {
      throw new Error('no artifacts in the fake ledger');
    },
  };
}

export const silentLog = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

export function claimedRun(overrides: Partial<ClaimedRun> = {}): ClaimedRun {
  return {
    id: 'run-1',
    team_uid: 'team-1',
    execution_id: 1,
    prompt: 'Fix the flaky test',
    agent_config: {},
    environment_id: null,
    conversation_id: null,
    harness: null,
    attachment_count: 0,
    state: 'CLAIMED',
    ...overrides,
  };
}

/**
 * One execution's scope over a fake ledger. `context` fills in what the phase under test reads (harnesses,
 * workspaces, sandbox); the rest is absent, as on a server with nothing configured.
 */
export function phaseScope(
  options: { run?: Partial<ClaimedRun>; context?: Partial<ExecutionContext>; retainsWorkspaces?: boolean } = {},
) {
  const ledger = new FakeLedger();
  const run = claimedRun(options.run);
  const stop = new AbortController();
  const context = {
    engineId: 'engine-1',
    ledger,
    log: silentLog,
    harnesses: new Map(),
    defaultHarness: 'command',
    sandbox: { kind: 'process', runAs: undefined, capabilities: { perExecution: false } },
    ...options.context,
  } as unknown as ExecutionContext;
  const scope: RunScope = {
    context,
    run,
    redactor: new Redactor(),
    record: new RunRecord(ledger, run, silentLog),
    signal: stop.signal,
    retainsWorkspaces: options.retainsWorkspaces ?? false,
  };
  return { scope, ledger, stop };
}
