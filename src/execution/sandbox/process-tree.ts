import type { SandboxExit } from './backend.js';
import type { ProcessOutput } from './process-output.js';

/** How long a tree has between the graceful signal and the final one, unless its killer says otherwise. */
export const DEFAULT_GRACE_MS = 2000;
/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `starting`: the process does not exist yet (a container's exec being created), so a signal waits for it;
 * `running`; `terminating`: the graceful signal went, the final one follows after the grace; `gone`: nothing of the
 * tree is left, and no signal goes any more (its ids may already belong to someone else).
 */
export type TreeState = 'starting' | 'running' | 'terminating' | 'gone';

/** How a backend signals its whole tree (a process group, a PID namespace's init, an exec's session). */
export type TreeSignal = (name: 'SIGTERM' | 'SIGKILL') => void | Promise<void>;

/** The end of a process as its backend saw it; whether it was killed or timed out is the tree's to say. */
export type TreeEnd = Pick<SandboxExit, 'code' | 'signal' | 'limitExceeded'>;

/**
 * The one life of a sandboxed process, whatever runs it: the wall-clock limit, a kill's graceful signal and the final
 * one after the grace, and the exit's classification (ended by its limit, by a kill, or by itself). Each backend
 * says how a signal reaches its tree and when the tree is gone; ProcessOutput carries the lines and settles `exited`.
 */
export class ProcessTree {
  private current: TreeState = 'starting';
  private timedOut = false;
  private killed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Whether the process exists (or its start has failed): until then a signal has nothing to reach. */
  private started = false;
  private markLaunched!: () => void;
  private readonly launched = new Promise<void>((resolve) => (this.markLaunched = resolve));

  constructor(
    private readonly output: ProcessOutput,
    private readonly signal: TreeSignal,
    /** The wall-clock limit (Infinity: none); the tree is terminated when it passes. */
    timeoutMs: number,
  ) {
    if (Number.isFinite(timeoutMs)) {
      const limit = setTimeout(
        () => {
          this.timedOut = true;
          this.terminate(DEFAULT_GRACE_MS);
        },
        Math.min(Math.max(timeoutMs, 0), MAX_TIMER_MS),
      );
      this.timers.push(limit);
    }
  }

  get state(): TreeState {
    return this.current;
  }

  /** Terminating or gone: whatever the backend was still setting up (a network) is no longer wanted. */
  get ending(): boolean {
    return this.current === 'terminating' || this.current === 'gone';
  }

  /** Killed or timed out: a shell-style exit code of 128 + a signal's number then means that signal. */
  get signalled(): boolean {
    return this.killed || this.timedOut;
  }

  /** The process exists: a signal asked for meanwhile goes now. */
  running(): void {
    if (this.current === 'starting') this.current = 'running';
    this.launch();
  }

  /** Ends the whole tree: the graceful signal, then the final one after `graceMs`. Resolves once it is gone. */
  kill(graceMs = DEFAULT_GRACE_MS): Promise<SandboxExit> {
    if (!this.ending) this.killed = true;
    this.terminate(graceMs);
    return this.output.exited;
  }

  /** Nothing of the tree is left: no more signals, no more timers. */
  gone(): void {
    this.current = 'gone';
    this.timers.forEach(clearTimeout);
    this.launch();
  }

  /** Resolves `exited` with how the tree ended (the first time only); the tree is gone from then on. */
  settle(end: TreeEnd): void {
    this.gone();
    this.output.settle({ ...end, timedOut: this.timedOut, killed: this.killed });
  }

  /**
   * An exit code as a shell reports one: 137 and 143 are SIGKILL and SIGTERM when this tree was sent them (an exec's
   * code in a container, where the engine reports no signal); otherwise the code itself.
   */
  classify(code: number | null): Pick<SandboxExit, 'code' | 'signal'> {
    if (this.signalled && (code === 137 || code === 143))
      return { code: null, signal: code === 137 ? 'SIGKILL' : 'SIGTERM' };
    return { code, signal: null };
  }

  private launch(): void {
    this.started = true;
    this.markLaunched();
  }

  private terminate(graceMs: number): void {
    if (this.ending) return;
    this.current = 'terminating';
    void this.send('SIGTERM');
    this.timers.push(setTimeout(() => void this.send('SIGKILL'), graceMs));
  }

  private async send(name: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    // Before the process exists there is nothing to signal: the signal waits for it (or for the end of its start).
    if (!this.started) await this.launched;
    if (this.current === 'gone') return;
    await this.signal(name);
  }
}
