import type { EnvironmentSnapshots } from '../../environments/index.js';
import type { SandboxImageSnapshots } from '../sandbox/backend.js';
import type { SnapshotFiles } from './snapshot-files.js';

/**
 * The setup snapshots' upkeep (warm-start.ts takes them): sizes measured after the fact, superseded, expired and
 * least recently used snapshots removed past the size bound, and files or images no record names; one pass at a time,
 * off the executions' path.
 */
export class SnapshotMaintenance {
  constructor(
    private readonly options: {
      snapshots: EnvironmentSnapshots;
      files: SnapshotFiles;
      images?: SandboxImageSnapshots;
      maxBytes: number;
      warn: (error: unknown, message: string) => void;
    },
  ) {}

  /** Snapshots made ready before their files were measured, with the size of their image (0 under bwrap). */
  private readonly unmeasured = new Map<string, number>();

  /** A snapshot made ready before its files were measured (its image's size, 0 under bwrap): measured by maintain. */
  unmeasuredReady(id: string, imageBytes: number): void {
    this.unmeasured.set(id, imageBytes);
  }

  /** Records the size of the snapshots made ready unmeasured (one gone meanwhile is skipped). */
  private async measure(): Promise<void> {
    for (const [id, imageBytes] of this.unmeasured) {
      this.unmeasured.delete(id);
      if (await this.options.files.has(id))
        await this.options.snapshots.measured(id, (await this.options.files.size(id)) + imageBytes);
    }
  }

  /** The maintenance in progress, if any: one at a time, and one more when asked meanwhile. */
  private maintaining: Promise<void> | undefined;
  private maintainAgain = false;

  /** Removes the superseded snapshots, then maintains (maintain), in the background; one pass at a time. */
  maintainLater(superseded: string[] = []): void {
    if (this.maintaining) {
      this.maintainAgain = true;
      // Their records are gone: the next pass finds their files and images unnamed and removes them.
      return;
    }
    this.maintaining = (async () => {
      for (const id of superseded) await this.drop(id);
      do {
        this.maintainAgain = false;
        await this.maintain();
      } while (this.maintainAgain);
    })()
      .catch((error) => this.options.warn(error, 'could not remove old setup snapshots'))
      .finally(() => {
        this.maintaining = undefined;
      });
  }

  /**
   * Resolves once no snapshot maintenance is in progress (the removal of superseded snapshots runs after the
   * execution that superseded them has gone on): for whoever must not overlap with it, such as a benchmark's next
   * iteration.
   */
  async settled(): Promise<void> {
    while (this.maintaining) await this.maintaining;
  }

  /**
   * Measures the snapshots made ready unmeasured, then removes expired and least recently used snapshots (past the
   * size bound), and files no record names.
   */
  async maintain(): Promise<void> {
    const { snapshots, files, maxBytes } = this.options;
    // Before the size bound is enforced.
    await this.measure();
    for (const id of await snapshots.expire(maxBytes)) await this.drop(id);
    // Listed before asking: a snapshot whose record is made meanwhile has no files (or image) yet, so none is taken
    // wrongly.
    const onDisk = [...new Set([...(await files.list()), ...((await this.options.images?.list()) ?? [])])];
    const known = await snapshots.existing(onDisk);
    for (const id of onDisk) if (!known.has(id)) await this.drop(id);
  }

  /** Removes a snapshot's files and image (each left for a later pass while an execution still uses it). */
  async drop(id: string): Promise<void> {
    await this.options.files.remove(id);
    await this.options.images
      ?.remove(id)
      .catch((error) => this.options.warn(error, 'could not remove a snapshot image'));
  }
}
