import type http from 'node:http';

/**
 * The HTTP requests the process is answering right now, so background chores can wait for a quiet moment. It
 * matters with PGlite: the database is one connection in this process, and a chore's statement that starts between
 * two queries of a request makes that request wait for the whole statement.
 */
export class RequestActivity {
  /** When each request in flight arrived (performance.now()). */
  private readonly inFlight = new Map<http.ServerResponse, number>();
  private waiters: Array<() => void> = [];
  /** When a request (not a stream) last arrived or ended (performance.now()); the start of tracking before any. */
  private lastActive = performance.now();

  /**
   * @param streamAfterMs a request in flight for longer than this is a stream (live events, a long poll) or
   *   stuck, not a burst of queries: it does not keep the API busy.
   */
  constructor(private readonly streamAfterMs = 2000) {}

  /** Counts `server`'s requests from their arrival until their response is done or their connection closed. */
  track(server: http.Server): void {
    server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
      this.inFlight.set(response, performance.now());
      this.lastActive = performance.now();
      response.once('close', () => {
        const arrived = this.inFlight.get(response);
        this.inFlight.delete(response);
        // A stream's end is not a burst of queries either.
        if (arrived !== undefined && performance.now() - arrived <= this.streamAfterMs)
          this.lastActive = performance.now();
        if (!this.busy) for (const wake of this.waiters.splice(0)) wake();
      });
    });
  }

  /** Whether a request that is not a stream is in flight. */
  get busy(): boolean {
    const now = performance.now();
    for (const arrived of this.inFlight.values()) if (now - arrived <= this.streamAfterMs) return true;
    return false;
  }

  /**
   * For how long the API has had no request (but streams) in flight and none arriving: 0 while busy. PGlite's
   * multi-second maintenance (a VACUUM that cleans the runs table's indexes) waits for the API to be idle for a
   * while, when a request arriving meanwhile is unlikely, rather than for the gap between two requests.
   */
  get idleMs(): number {
    return this.busy ? 0 : performance.now() - this.lastActive;
  }

  /**
   * Resolves once no request (but streams) is in flight, or after `maxWaitMs` whatever the traffic, so a chore
   * under constant load still gets its turn.
   */
  async quiet(maxWaitMs: number): Promise<void> {
    // After a long statement, the timers that end a chore's pause run before Node reads the requests that arrived
    // meanwhile: let it read them first (setImmediate runs after the poll phase), so they count.
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.busy) return;
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve();
      }, maxWaitMs);
      this.waiters.push(wake);
    });
  }
}
