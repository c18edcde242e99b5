// A small typed client for Hangar's API: bearer key, optional team, problem+json errors as ApiError.

export const API_BASE = '/api/v1';

/** The problem+json body Hangar answers every error with. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  error_code?: string;
  retryable?: boolean;
  trace_id?: string;
  errors?: Array<{ file?: string; line?: number; message: string }>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly problem: Problem = {},
  ) {
    super(detail ? `${title}: ${detail}` : title);
  }

  get traceId(): string | undefined {
    return this.problem.trace_id;
  }
}

export interface Credentials {
  apiKey: string;
  /** Needed only by users in several teams (sent as X-Team-Uid). */
  teamUid?: string;
}

export type Query = Record<string, string | number | boolean | readonly string[] | undefined | null>;

export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function problemOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let problem: Problem = {};
  try {
    problem = text ? (JSON.parse(text) as Problem) : {};
  } catch {
    problem = { detail: text.slice(0, 500) };
  }
  return new ApiError(
    response.status,
    problem.error_code ?? `http_${response.status}`,
    problem.title ?? (response.statusText || `HTTP ${response.status}`),
    problem.detail ?? '',
    problem,
  );
}

export class HangarClient {
  constructor(
    readonly credentials: Credentials,
    /** Called when Hangar refuses the key (401), e.g. after it was revoked. */
    private readonly onUnauthorized?: (error: ApiError) => void,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      authorization: `Bearer ${this.credentials.apiKey}`,
      ...(this.credentials.teamUid ? { 'x-team-uid': this.credentials.teamUid } : {}),
      ...extra,
    };
  }

  /** Sends a request; resolves to the response when it is a success, else throws an ApiError. */
  async send(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${API_BASE}${path}${queryString(options.query)}`, {
        method,
        headers: this.headers({
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        }),
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw new ApiError(
        0,
        'network_error',
        'Hangar could not be reached',
        error instanceof Error ? error.message : String(error),
      );
    }
    if (!response.ok) {
      const error = await problemOf(response);
      if (response.status === 401) this.onUnauthorized?.(error);
      throw error;
    }
    return response;
  }

  async request<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, { query, signal });
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  /** Resolves to true once deleted (most deletes answer 204, with no body). */
  async delete(path: string): Promise<true> {
    await this.request('DELETE', path);
    return true;
  }

  /** Fetches a download (following Hangar's redirect to its signed link) and hands it to the browser as a file. */
  async download(path: string, fallbackName: string): Promise<void> {
    const response = await this.send('GET', path);
    const disposition = response.headers.get('content-disposition') ?? '';
    const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement('a');
    link.href = url;
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}

/** Segment of a URL path, escaped. */
export const seg = (value: string) => encodeURIComponent(value);
