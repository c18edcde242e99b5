import { outsideTraces } from '../tracing.js';
/**
 * Coalesces writes that many callers make at about the same time into one statement (group commit done by the
 * application). Under load a commit per item is what limits throughput: each waits for its own WAL flush, and a
 * transaction that sent a NOTIFY holds a cluster-wide lock through it. Items submitted in the same turn of the
 * event loop, or while earlier batches are being written, go out together. Reads coalesce the same way (one
 * statement and one socket write for many callers); an item never joins a batch already sent, so it always
 * sees what was committed before it was submitted.
 */
export interface BatcherOptions<In, Out> {
  /** Writes the items and returns one result per item, in order. */
  write(items: In[]): Promise<Out[]>;
  maxBatch: number;
  /** Batches being written at once (each holds a pooled connection). */
  maxInFlight: number;
  /**
   * Write the batches outside any trace, so their statements get no database span. For batches of many unrelated
   * callers' items (the engine's writes for all its runs): they would join whichever caller's trace the batch
   * started in, and on an engine executing many short runs these spans are most of what tracing costs.
   */
  outsideTraces?: boolean;
}

interface Waiting<In, Out> {
  item: In;
  resolve(value: Out): void;
  reject(error: unknown): void;
}

export class Batcher<In, Out> {
  private queue: Array<Waiting<In, Out>> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly options: BatcherOptions<In, Out>) {}

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // setImmediate, not a timer: the batch waits for the callers of this turn only, never for a clock.
    setImmediate(() => {
      this.scheduled = false;
      void this.writeNext();
    });
  }

  private async writeNext(): Promise<void> {
    const batch = this.queue.splice(0, this.options.maxBatch);
    if (batch.length === 0) return;
    this.inFlight++;
    this.schedule();
    try {
      await this.writeBatch(batch);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }

  private async writeBatch(batch: Array<Waiting<In, Out>>): Promise<void> {
    try {
      const write = () => this.options.write(batch.map((waiting) => waiting.item));
      const results = await (this.options.outsideTraces ? outsideTraces(write) : write());
      for (const [index, waiting] of batch.entries()) waiting.resolve(results[index]!);
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // One bad item must not fail the others: write each on its own, so only the bad one is rejected.
      for (const waiting of batch) await this.writeBatch([waiting]);
    }
  }
}
