/**
 * What a pass asks for next: nothing (wait for a wake-up or the interval), `'now'` (more work is waiting: pass
 * again at once), `{ inMs }` (wait at most that long instead of the interval) or `'stop'` (the loop is done).
 */
export type NextPass = undefined | 'now' | 'stop' | { inMs: number };

export interface PollingLoopOptions {
  /** One look at the work. Passes never overlap. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a pass with nothing to say about the next one returns nothing
  pass: () => Promise<NextPass | void>;
  /** Longest wait between passes when nothing wakes the loop (wake-ups can be lost, so polling is the floor). */
  intervalMs: number;
  /** Wait one interval before the first pass (periodic chores), instead of looking at once. */
  waitFirst?: boolean;
  /** Told of a pass that threw; the loop then waits as after any pass and carries on. Not told while stopping. */
  onError: (error: unknown) => void;
}

/**
 * The one background loop of the server: passes over some work, one at a time, and between them waits for the
 * interval or a `wake()`, whichever comes first. A wake during a pass is kept, so the next pass follows at once
 * and no wake-up is lost. `stop()` ends the wait and awaits the pass in progress. The loop holds no state shared
 * between processes: running it in N replicas is safe as long as each pass claims its work (SKIP LOCKED, leases).
 */
export class PollingLoop {
  private running: Promise<void> | undefined;
  private stopRequested = false;
  private woken = false;
  private endWait: (() => void) | undefined;

  constructor(private readonly options: PollingLoopOptions) {}

  /** Begins the passes (once; a started loop is left as it is). */
  start(): void {
    this.running ??= this.run();
  }

  /** Look again now: ends the wait, or during a pass asks for another right after it. */
  wake(): void {
    this.woken = true;
    this.endWait?.();
  }

  /** Ends the loop: a wait ends at once and the pass in progress, if any, is awaited. */
  async stop(): Promise<void> {
    this.stopRequested = true;
    this.endWait?.();
    await this.running;
  }

  /** Whether `stop()` was called: a long pass (draining a backlog) checks it to end early. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** Resolves once the loop has ended, by `stop()` or by a pass answering `'stop'`. Never rejects. */
  get ended(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    if (this.options.waitFirst) await this.wait(this.options.intervalMs);
    while (!this.stopRequested) {
      this.woken = false;
      // biome-ignore lint/suspicious/noConfusingVoidType: what a pass returns (see PollingLoopOptions.pass)
      let next: NextPass | void;
      try {
        next = await this.options.pass();
      } catch (error) {
        if (!this.stopRequested) this.report(error);
      }
      if (next === 'stop') break;
      if (next === 'now' || this.woken) continue;
      await this.wait(typeof next === 'object' ? next.inMs : this.options.intervalMs);
    }
  }

  private report(error: unknown): void {
    try {
      this.options.onError(error);
    } catch {
      // A failing error report must not end the loop either.
    }
  }

  /** A wait that `wake()` and `stop()` cut short. */
  private wait(ms: number): Promise<void> {
    if (this.stopRequested) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.endWait = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.endWait = done;
    });
  }
}
