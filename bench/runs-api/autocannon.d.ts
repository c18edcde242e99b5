// autocannon ships no type declarations and @types/autocannon is not a dependency: this declares the small
// part of its programmatic API the benchmark uses.
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      body?: string;
      headers?: Record<string, string>;
      /** Called each time the request is built (every send): returns the request to send. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
      /** Called with each complete answer to this request. */
      onResponse?: (
        status: number,
        body: string,
        context: Record<string, unknown>,
        headers: Record<string, string | string[]>,
      ) => void;
    }
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Worker threads generating the load (off the main thread, which serves the requests). */
      workers?: number;
      /** Requests per second from all connections together (open loop); unlimited when absent. */
      overallRate?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Each connection cycles through these in order. */
      requests?: Request[];
    }
    interface Histogram {
      average: number;
      p50: number;
      p99: number;
      max: number;
      total: number;
    }
    interface Result {
      /** Seconds. */
      duration: number;
      requests: Histogram;
      /** Milliseconds, 2xx responses only. */
      latency: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}
