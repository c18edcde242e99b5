// A small typed client for Hangar's API: bearer key, optional team, problem+json errors as ApiProblem.
import { ApiProblem, fetchApi, jsonOf } from '../../../src/platform/http/api-fetch';

export const API_BASE = '/api/v1';

/** The one error type of Hangar's clients, shared with the CLI: status, code, title, detail and the problem body. */
export { ApiProblem };

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

export class HangarClient {
  constructor(
    readonly credentials: Credentials,
    /** Called when Hangar refuses the key (401), e.g. after it was revoked. */
    private readonly onUnauthorized?: (error: ApiProblem) => void,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      authorization: `Bearer ${this.credentials.apiKey}`,
      // Runs created here get the source WEB_APP.
      'x-hangar-client': 'dashboard',
      ...(this.credentials.teamUid ? { 'x-team-uid': this.credentials.teamUid } : {}),
      ...extra,
    };
  }

  /** Sends a request; resolves to the response when it is a success, else throws an ApiProblem. */
  async send(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    try {
      return await fetchApi(`${API_BASE}${path}${queryString(options.query)}`, {
        method,
        headers: this.headers({
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        }),
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 401) this.onUnauthorized?.(error);
      throw error;
    }
  }

  async request<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<T> {
    return jsonOf<T>(await this.send(method, path, options));
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
