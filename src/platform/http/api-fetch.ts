// One way for a client to call Hangar's API: fetch, and turn every error answer (problem+json or anything else) and
// an unreachable server into one error type. The CLI (client.ts) and the dashboard (web/src/api/client.ts) share it,
// so it imports nothing and uses only what Node and browsers both have: Vite bundles it as it is.

/** The problem+json body Hangar answers every error with (RFC 9457 members, Hangar's own, extensions). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  /** "title: detail" in one line. */
  error?: string;
  error_code?: string;
  retryable?: boolean;
  trace_id?: string;
  /** Every problem found in a factory definition. */
  errors?: Array<{ file?: string; line?: number | null; message: string }>;
}

/** An error answer from Hangar, or status 0 when Hangar could not be reached (the reason is the detail). */
export class ApiProblem extends Error {
  readonly problem: Problem;

  /** `body`: the answer's parsed JSON (a problem), or its text when it was not JSON. */
  constructor(
    readonly status: number,
    body: unknown,
    message?: string,
  ) {
    const problem: Problem =
      typeof body === 'object' && body !== null && !Array.isArray(body)
        ? (body as Problem)
        : { detail: typeof body === 'string' ? body.slice(0, 500) : JSON.stringify(body) };
    super(message ?? `HTTP ${status}: ${problem.error ?? problem.detail ?? JSON.stringify(body)}`);
    this.problem = problem;
  }

  /** Hangar's error_code; `network_error` or `http_<status>` when the answer had none. */
  get code(): string {
    return this.problem.error_code ?? (this.status === 0 ? 'network_error' : `http_${this.status}`);
  }

  get title(): string {
    return this.problem.title ?? `HTTP ${this.status}`;
  }

  get detail(): string {
    return this.problem.detail ?? '';
  }

  get traceId(): string | undefined {
    return this.problem.trace_id;
  }
}

/** The error an answer that is not a success stands for; without a problem's title, the status text is one. */
export async function problemOf(response: Response): Promise<ApiProblem> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    // Not JSON (a proxy's error page): the text is the detail.
  }
  const problem = new ApiProblem(response.status, body);
  problem.problem.title ??= response.statusText || undefined;
  return problem;
}

/**
 * Sends a request; resolves to the response when it is a success, else throws an ApiProblem. An abort is thrown
 * as it came, so that callers can tell it from a failure.
 */
export async function fetchApi(url: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if ((error as Error | undefined)?.name === 'AbortError') throw error;
    // Node's fetch says only "fetch failed"; what failed (ECONNREFUSED, a DNS error) is its cause.
    const cause = (error as { cause?: { message?: unknown } } | undefined)?.cause?.message;
    const reason = typeof cause === 'string' ? cause : error instanceof Error ? error.message : String(error);
    throw new ApiProblem(0, { title: 'Hangar could not be reached', detail: reason }, reason);
  }
  if (!response.ok) throw await problemOf(response);
  return response;
}

/** A success's JSON body; undefined when it has none (204, or an empty body). */
export async function jsonOf<T>(response: Response): Promise<T> {
  const text = response.status === 204 ? '' : await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
