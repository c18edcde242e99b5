import type { TranscriptRow } from '../../runs/index.js';
import type { SplitLineRedaction } from '../redaction/index.js';

/** Lines written in one batch at most; a busy harness is written every FLUSH_MS in batches. */
const BATCH_LINES = 500;
const FLUSH_MS = 50;

/**
 * Buffers an execution's transcript lines and writes them in batches, in order: one insert per burst of output
 * rather than per line, while live viewers still see output within a few tens of milliseconds.
 */
export class TranscriptWriter {
  private buffer: TranscriptRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly write: (rows: TranscriptRow[]) => Promise<void>,
    private readonly runId: string,
    private readonly executionId: number,
    /** The run's secret values out of every line before it is buffered; a line may be held back (see there). */
    private readonly redaction?: SplitLineRedaction,
  ) {}

  add(stream: 'input' | 'output', line: string): void {
    const ready = this.redaction ? this.redaction.push(stream, line) : [{ stream, line }];
    for (const row of ready)
      this.buffer.push({ run_id: this.runId, execution_id: this.executionId, stream: row.stream, line: row.line });
    if (this.buffer.length >= BATCH_LINES) this.schedule(0);
    else this.schedule(FLUSH_MS);
  }

  private schedule(delay: number): void {
    if (this.timer && delay > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.writeBuffered().catch(() => undefined), delay);
  }

  /** Why a batch could not be written, if one could not. */
  get writeError(): unknown {
    return this.failure;
  }

  /**
   * The lines not written yet, for the caller to write with its next write (an execution's end), once the batches
   * already on their way are written: nothing is written out of order.
   */
  async takeRest(): Promise<TranscriptRow[]> {
    this.releaseHeld();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    const rows = this.buffer;
    this.buffer = [];
    return rows;
  }

  /** The line the redaction held back, if any: no line follows any more. */
  private releaseHeld(): void {
    for (const row of this.redaction?.end() ?? [])
      this.buffer.push({ run_id: this.runId, execution_id: this.executionId, stream: row.stream, line: row.line });
  }

  /** Writes everything added so far (the output has ended); rejects if any batch could not be written. */
  flush(): Promise<void> {
    this.releaseHeld();
    return this.writeBuffered();
  }

  private writeBuffered(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.buffer;
    this.buffer = [];
    this.writing = this.writing.then(async () => {
      for (let start = 0; start < rows.length; start += BATCH_LINES) {
        try {
          await this.write(rows.slice(start, start + BATCH_LINES));
        } catch (error) {
          this.failure ??= error;
        }
      }
    });
    return this.writing.then(() => {
      if (this.failure) throw this.failure;
    });
  }
}
