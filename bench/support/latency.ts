// The latency sampling the benchmarks share: percentiles, requests timed one after another, and requests started
// at a fixed rate while something else runs (the open-loop way: a slow answer does not delay the next request,
// so a stall shows in the figures instead of lowering the rate).

/** Nearest-rank percentile of ascending values (NaN when there are none). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Latencies in ms, ascending, and how many requests failed (a status other than the expected, or no answer). */
export interface Sample {
  latencies: number[];
  failed: number;
}

/** `once` run `count` times one after another, after one unmeasured warm-up (plans, caches); ascending ms. */
export async function timeSequentially(count: number, once: () => Promise<void>): Promise<number[]> {
  await once();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

/**
 * Starts `request` `ratePerSecond` times a second until `until` settles, each timed on its own; a request that
 * answers false or throws counts as failed. Resolves once the last request answered. `fromSchedule`: each request
 * is timed from when the schedule meant to send it, not from when it was sent: when the server runs in the
 * benchmark's process (PGlite), a statement that blocks the event loop also delays the sending, and the requests
 * due during the stall would otherwise look fast.
 */
export async function sampleAtRate(options: {
  request: () => Promise<boolean>;
  ratePerSecond: number;
  until: Promise<unknown>;
  fromSchedule?: boolean;
}): Promise<Sample> {
  const sample: Sample = { latencies: [], failed: 0 };
  const inFlight: Promise<void>[] = [];
  let done = false;
  void options.until.then(
    () => (done = true),
    () => (done = true),
  );
  const interval = 1000 / options.ratePerSecond;
  const began = performance.now();
  for (let sent = 0; !done; sent++) {
    const started = options.fromSchedule ? began + sent * interval : performance.now();
    inFlight.push(
      options.request().then(
        (ok) => {
          if (ok) sample.latencies.push(performance.now() - started);
          else sample.failed += 1;
        },
        () => {
          sample.failed += 1;
        },
      ),
    );
    // On the schedule from the start, so the time a request takes to send does not slow the rate down.
    const next = began + (sent + 1) * interval;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  await Promise.all(inFlight);
  sample.latencies.sort((a, b) => a - b);
  return sample;
}

/** A GET answering 200, body read: what the list samplers request. */
export function getOk(url: string, headers: Record<string, string>): () => Promise<boolean> {
  return async () => {
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    return response.status === 200;
  };
}
