import type { Bus } from '../platform/bus.js';
import { WakeableSleep } from '../platform/wakeable-sleep.js';
import type { EngineContext } from './context.js';
import { DebugSessions } from './debug-sessions.js';
import { Execution } from './executor.js';
import type { CapacityLimits, ClaimedRun } from '../runs/index.js';

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
}

/**
 * The engine of one process: claims queued runs (woken by NOTIFY, polling as a fallback), executes them, renews
 * their leases, takes back the runs of engines that died, and acts on cancels and follow-ups for the runs it
 * holds. Any number of engines share one database.
 */
export class Engine {
  private readonly executions = new Map<string, Execution>();
  readonly debugSessions: DebugSessions;
  private stopped = false;
  private readonly pause = new WakeableSleep();
  private woken = false;
  private loops: Promise<void>[] = [];
  private readonly pollIntervalMs: number;
  private readonly claimBatch: number;

  constructor(private readonly options: EngineOptions) {
    this.debugSessions = new DebugSessions(options.context);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.claimBatch = options.claimBatch ?? 50;
  }

  get running(): number {
    return this.executions.size;
  }

  async start(): Promise<void> {
    const { bus, context } = this.options;
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
    // Directories left by an engine that died in this data directory; runs in them were taken back by lease.
    if (this.options.cleanWorkspacesAtStart) await context.workspaces.removeAllExcept(new Set());
    this.loops = [this.dispatchLoop(), this.leaseLoop()];
  }

  poke(): void {
    this.woken = true;
    this.pause.wake();
  }

  /** Stops claiming, ends the runs in progress (requeued if their agent had not started) and closes debug windows. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await Promise.all(this.loops);
    for (const execution of this.executions.values()) execution.stop('shutdown');
    await Promise.all([...this.executions.values()].map((execution) => execution.done));
    await this.debugSessions.closeAll();
  }

  private async dispatchLoop(): Promise<void> {
    const { context, limits, leaseSeconds } = this.options;
    let lastReap = 0;
    while (!this.stopped) {
      this.woken = false;
      let claimed = 0;
      let requested = 0;
      try {
        if (Date.now() - lastReap >= Math.min(5000, (leaseSeconds * 1000) / 2)) {
          lastReap = Date.now();
          await context.lifecycle.expireLeases();
        }
        const free = limits.global - this.executions.size;
        if (free > 0) {
          requested = Math.min(free, this.claimBatch);
          const runs = await context.lifecycle.claim(context.engineId, leaseSeconds, limits, requested);
          claimed = runs.length;
          for (const run of runs) this.execute(run);
        }
      } catch (error) {
        if (!this.stopped) context.log.error({ err: error }, 'dispatch pass failed; retrying');
      }
      // A full batch means more may be waiting.
      if (claimed > 0 && claimed === requested) continue;
      if (!this.woken) await this.pause.sleep(this.pollIntervalMs);
    }
  }

  private execute(run: ClaimedRun): void {
    const execution = new Execution(this.options.context, run, (retained) => this.debugSessions.retain(retained));
    this.executions.set(run.id, execution);
    void execution.done.finally(() => {
      if (this.executions.get(run.id) === execution) this.executions.delete(run.id);
      this.poke();
    });
  }

  /** Renews the leases of the runs in progress; a run this engine no longer holds is stopped at once. */
  private async leaseLoop(): Promise<void> {
    const { context, leaseSeconds } = this.options;
    const interval = Math.max(500, Math.min(2000, (leaseSeconds * 1000) / 3));
    while (!this.stopped) {
      await this.sleepFixed(interval);
      const ids = [...this.executions.keys()];
      try {
        const held = await context.lifecycle.renewLeases(context.engineId, ids, leaseSeconds);
        for (const id of ids) if (!held.has(id)) this.executions.get(id)?.stop('lost');
      } catch (error) {
        if (!this.stopped) context.log.warn({ err: error }, 'lease renewal failed');
      }
    }
  }

  private sleepFixed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      const check = setInterval(() => {
        if (this.stopped) {
          clearTimeout(timer);
          clearInterval(check);
          resolve();
        }
      }, 100);
      setTimeout(() => clearInterval(check), ms + 1);
    });
  }
}
