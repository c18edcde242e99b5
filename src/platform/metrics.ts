import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The process's Prometheus registry: every slice defines its own metrics (its `metrics.ts`) in it, and `/metrics`
 * serves it with the server's database-derived gauges (app/metrics.ts). One per process, like the process it
 * describes: two servers in one process (tests) share its counters.
 */
export const metricsRegistry = new Registry();

let defaultsCollected = false;

/** Node's process metrics (CPU, memory, event loop lag, GC, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** Seconds, from a fast answer to a run of hours: queue waits, setup, agents, whole runs. */
export const RUN_SECONDS_BUCKETS = [0.05, 0.25, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400];

/** Seconds of a request or a database round trip. */
export const REQUEST_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What a label value is when the caller has none. */
export const NO_VALUE = 'none';
/** What a label value becomes once its label has as many values as it may have. */
export const OTHER_VALUE = 'other';

/**
 * The values of one label, bounded: the first `max` distinct values seen are kept, any later one counts as `other`.
 * For labels whose values come from operators or callers (harness names, model ids, error codes): a caller cannot
 * add series without limit, whatever it sends. Values are also cut to a length.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly maxLength = 64,
  ) {}

  of(value: string | null | undefined): string {
    if (value === null || value === undefined || value === '') return NO_VALUE;
    const cut = value.slice(0, this.maxLength);
    if (this.seen.has(cut)) return cut;
    if (this.seen.size >= this.max) return OTHER_VALUE;
    this.seen.add(cut);
    return cut;
  }
}

/**
 * A value read from the database at most every `maxAgeMs`, shared by whoever asks meanwhile (every scrape of every
 * scraper): a scrape never costs more than one read per period, and concurrent scrapes wait on the same read. A
 * failed read answers the last value (or throws when there is none) and is tried again on the next ask.
 */
export class CachedSample<T> {
  private value: { at: number; sample: T } | undefined;
  private reading: Promise<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    if (this.value && this.now() - this.value.at < this.maxAgeMs) return Promise.resolve(this.value.sample);
    this.reading ??= this.read()
      .then((sample) => {
        this.value = { at: this.now(), sample };
        return sample;
      })
      .catch((error: unknown) => {
        if (this.value) return this.value.sample;
        throw error;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}

let serving = false;

/**
 * Says that this process serves /metrics. Figures that cost a database read of their own (the creation time of
 * claimed runs, the columns of ended ones) are only gathered from then on; counters that cost nothing always are.
 */
export function serveMetrics(): void {
  serving = true;
}

export function metricsServed(): boolean {
  return serving;
}
