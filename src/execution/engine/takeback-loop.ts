import type { FastifyBaseLogger } from 'fastify';
import { type NextPass, PollingLoop } from '../../platform/loop.js';
import { engineGraceSeconds, type RunLifecycle, takebackCheckIntervalMs } from '../../runs/index.js';

export interface TakebackLoopOptions {
  lifecycle: RunLifecycle;
  leaseSeconds: number;
  log: FastifyBaseLogger;
  /** The only engine that can be alive (PGlite): the runs of every other one are taken back at once. */
  soleEngine?: string;
  /** Runs were taken back: capacity is free, or runs are queued again. */
  onTakenBack: () => void;
}

/** A lease that passed while its row was busy (a batch ending it) is looked at again this soon. */
const BUSY_RETRY_MS = 100;

/**
 * Takes back the runs of executors that are gone (src/runs/lifecycle/leases.ts): looks every renewal interval for
 * engines whose process died, and wakes exactly when the earliest lease passes, so that a lease is kept to its
 * length rather than to the next periodic look. Every engine and worker hub runs one; they may all act at once.
 */
export class TakebackLoop {
  private readonly loop: PollingLoop;

  constructor(private readonly options: TakebackLoopOptions) {
    this.loop = new PollingLoop({
      intervalMs: takebackCheckIntervalMs(options.leaseSeconds),
      pass: () => this.pass(),
      onError: (error) => options.log.warn({ err: error }, 'could not take back the runs of gone executors'),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** One pass now, before the loop starts (its failure is logged, as the loop's are). */
  async once(): Promise<void> {
    await this.pass().catch((error) =>
      this.options.log.warn({ err: error }, 'could not take back the runs of gone executors'),
    );
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(): Promise<NextPass> {
    const { lifecycle, leaseSeconds, soleEngine, onTakenBack } = this.options;
    const { taken, nextExpiryInMs } = await lifecycle.takeBack({
      graceSeconds: engineGraceSeconds(leaseSeconds),
      soleEngine,
    });
    if (taken > 0) onTakenBack();
    const interval = takebackCheckIntervalMs(leaseSeconds);
    if (nextExpiryInMs === null || nextExpiryInMs >= interval) return undefined;
    // A few milliseconds late, so that the lease has passed by the database's clock when the pass looks.
    return { inMs: nextExpiryInMs < 0 ? BUSY_RETRY_MS : Math.ceil(nextExpiryInMs) + 5 };
  }
}
