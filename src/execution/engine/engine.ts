import path from 'node:path';
import type { Bus } from '../../platform/bus.js';
import { type NextPass, PollingLoop } from '../../platform/loop.js';
import { type CapacityLimits, type ClaimedRun, leaseRenewalIntervalMs } from '../../runs/index.js';
import type { EngineContext } from '../run/context.js';
import { Execution } from '../run/executor.js';
import { holdRunReadableFiles } from '../sandbox/run-readable-file.js';
import { DebugSessions } from './debug-sessions.js';
import { dispatchPickup, executionsInFlight } from './metrics.js';
import type { EnginePresence } from './presence.js';
import { TakebackLoop } from './takeback-loop.js';

export interface EngineOptions {
  context: EngineContext;
  bus: Bus;
  limits: CapacityLimits;
  leaseSeconds: number;
  /** Longest wait between looks at the queue when no notification arrives. */
  pollIntervalMs?: number;
  /** Runs claimed per transaction. */
  claimBatch?: number;
  /** Remove leftover workspaces at start (only when no other engine can share the data directory). */
  cleanWorkspacesAtStart?: boolean;
  /** Tells the other replicas this engine is alive (its heartbeat and lock). */
  presence: EnginePresence;
  /** No other engine can be alive (PGlite: one process per data directory): the others' runs are taken back at start. */
  soleEngine?: boolean;
  /**
   * Which executions' workspaces some engine may still use (store.workspacesInUse): with it, the engine removes the
   * others at start and then once per lease length, so that no replica keeps the workspaces of executions that
   * died with an engine, while none removes another live replica's.
   */
  workspacesInUse?: (executions: Array<{ runId: string; executionId: number }>) => Promise<Set<string>>;
}

/**
 * The engine of one process: claims queued runs (woken by NOTIFY, polling as a fallback), executes them, renews
 * their leases, takes back the runs of engines that died, and acts on cancels and follow-ups for the runs it
 * holds. Any number of engines share one database.
 */
export class Engine {
  private readonly executions = new Map<string, Execution>();
  readonly debugSessions: DebugSessions;
  private readonly dispatching: PollingLoop;
  private readonly renewing: PollingLoop;
  private readonly takingBack: TakebackLoop;
  private readonly sweeping: PollingLoop | undefined;
  private readonly claimBatch: number;
  private releaseRunFiles: (() => void) | undefined;

  constructor(private readonly options: EngineOptions) {
    const { context, leaseSeconds } = options;
    this.debugSessions = new DebugSessions(context);
    this.claimBatch = options.claimBatch ?? 50;
    this.dispatching = new PollingLoop({
      intervalMs: options.pollIntervalMs ?? 1000,
      pass: () => this.dispatch(),
      onError: (error) => context.log.error({ err: error }, 'dispatch pass failed; retrying'),
    });
    this.renewing = new PollingLoop({
      intervalMs: leaseRenewalIntervalMs(leaseSeconds),
      waitFirst: true,
      pass: () => this.renewLeases(),
      onError: (error) => context.log.warn({ err: error }, 'lease renewal failed'),
    });
    this.takingBack = new TakebackLoop({
      lifecycle: context.lifecycle,
      leaseSeconds,
      log: context.log,
      soleEngine: options.soleEngine ? context.engineId : undefined,
      // Capacity was freed or runs were queued again: claim now, and wake the other replicas.
      onTakenBack: () => options.bus.announceDispatch(),
    });
    const inUse = options.workspacesInUse;
    this.sweeping = inUse
      ? new PollingLoop({
          intervalMs: leaseSeconds * 1000,
          waitFirst: true,
          pass: () => this.sweepWorkspaces(inUse),
          onError: (error) => context.log.warn({ err: error }, 'removing unused workspaces failed'),
        })
      : undefined;
  }

  get running(): number {
    return this.executions.size;
  }

  /** The engine's warm starts (issue 28); undefined when snapshots are off. */
  get warmStarts(): EngineContext['warm'] {
    return this.options.context.warm;
  }

  /**
   * Resolves once the work the engine does beside its executions is over: snapshot maintenance and the removal of
   * retired containers. For whoever must not overlap with it, such as a benchmark's next iteration.
   */
  async settled(): Promise<void> {
    const { warm, sandbox } = this.options.context;
    await Promise.all([warm?.settled(), sandbox.settled()]);
  }

  async start(): Promise<void> {
    const { bus, context } = this.options;
    this.releaseRunFiles = holdRunReadableFiles();
    await bus.onDispatch(() => this.poke());
    await bus.onRunControl((action, runId) => {
      if (action === 'cancel') this.executions.get(runId)?.stop('cancelled');
      else if (action === 'agent')
        void this.executions
          .get(runId)
          ?.deliverFollowups()
          .catch((error) => context.log.warn({ err: error, runId }, 'follow-up delivery failed'));
      else if (action === 'debug') this.debugSessions.followUp(runId);
    });
    // Directories left by an engine that died in this data directory (its runs are taken back at start).
    if (this.options.cleanWorkspacesAtStart) await context.workspaces.removeAllExcept(new Set());
    // Present before the first claim: a run this engine holds always has an engine row to judge it by.
    await this.options.presence.start();
    // Before the first claim: the executions of an engine that died are not running anywhere unless still held. The
    // runs of executors gone (their leases passed, their engine's lock free) are taken back first, so that the sweep
    // finds their workspaces unused and the server is ready only once they are gone (issue 48, item 3).
    await this.takingBack.once();
    if (this.options.workspacesInUse)
      await this.sweepWorkspaces(this.options.workspacesInUse).catch((error) =>
        context.log.warn({ err: error }, 'removing unused workspaces failed'),
      );
    this.takingBack.start();
    this.dispatching.start();
    this.renewing.start();
    this.sweeping?.start();
  }

  poke(): void {
    this.dispatching.wake();
  }

  /** Stops claiming, ends the runs in progress (requeued if their agent had not started) and closes debug windows. */
  async stop(): Promise<void> {
    await Promise.all([this.dispatching.stop(), this.renewing.stop(), this.takingBack.stop(), this.sweeping?.stop()]);
    for (const execution of this.executions.values()) execution.stop('shutdown');
    await Promise.all([...this.executions.values()].map((execution) => execution.done));
    await this.debugSessions.closeAll();
    await this.options.presence.stop();
    // No execution holds a lease of the egress proxy any more: its process ends.
    await this.options.context.egress?.stop();
    // Nothing of this engine's starts a sandbox or a clone any more.
    this.releaseRunFiles?.();
  }

  /** Claims as many queued runs as there is room for. */
  private async dispatch(): Promise<NextPass> {
    const { context, limits, leaseSeconds } = this.options;
    const free = limits.global - this.executions.size;
    if (free <= 0) return undefined;
    const requested = Math.min(free, this.claimBatch);
    const passStarted = performance.now();
    const claimStarted = new Date();
    const runs = await context.lifecycle.claim(context.engineId, leaseSeconds, limits, requested);
    for (const run of runs) this.execute(run, claimStarted);
    if (runs.length > 0) dispatchPickup.observe((performance.now() - passStarted) / 1000);
    // A full batch means more may be waiting.
    return runs.length > 0 && runs.length === requested ? 'now' : undefined;
  }

  private execute(run: ClaimedRun, claimStarted: Date): void {
    const execution = new Execution(
      this.options.context,
      run,
      (retained) => this.debugSessions.retain(retained),
      claimStarted,
    );
    this.executions.set(run.id, execution);
    executionsInFlight.inc();
    void execution.done.finally(() => {
      executionsInFlight.dec();
      if (this.executions.get(run.id) === execution) this.executions.delete(run.id);
      this.poke();
    });
  }

  /** Removes the workspaces no execution uses any more, this engine's own in progress and kept ones aside. */
  private async sweepWorkspaces(inUse: NonNullable<EngineOptions['workspacesInUse']>): Promise<void> {
    const own = new Set([
      ...[...this.executions.values()].map((execution) => execution.workspaceName),
      ...this.debugSessions.workspaces.map((workspace) => path.basename(workspace)),
    ]);
    const removed = await this.options.context.workspaces.sweep(inUse, own);
    if (removed > 0) this.options.context.log.info({ removed }, 'removed workspaces no execution uses any more');
  }

  /**
   * Renews the engine's heartbeat and the leases of the runs in progress; a run this engine no longer holds is
   * stopped at once.
   */
  private async renewLeases(): Promise<void> {
    const { context, leaseSeconds } = this.options;
    const heartbeat = this.options.presence
      .heartbeat()
      .catch((error) => context.log.warn({ err: error }, 'engine heartbeat failed'));
    const ids = [...this.executions.keys()];
    const held = await context.lifecycle.renewLeases(context.engineId, ids, leaseSeconds);
    for (const id of ids) if (!held.has(id)) this.executions.get(id)?.stop('lost');
    await heartbeat;
  }
}
