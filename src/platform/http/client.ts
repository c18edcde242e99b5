/** A small client for Hangar's own API, used by the `hangar` CLI verbs. */
import { show } from '../cli/output.js';
import { ApiProblem, fetchApi, jsonOf } from './api-fetch.js';

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  team?: string | undefined;
}

export function clientOptionsFromEnv(env = process.env): ClientOptions {
  const apiKey = env.HANGAR_API_KEY;
  if (!apiKey) throw new Error('set HANGAR_API_KEY to an API key (the first start prints one)');
  return {
    baseUrl: (env.HANGAR_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    apiKey,
    team: env.HANGAR_TEAM,
  };
}

/** A request with the environment's credentials; an unreachable server names HANGAR_URL, a refusal is an ApiProblem. */
export async function sendApi(options: ClientOptions, path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetchApi(apiUrl(options, path), withCredentials(options, init));
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 0) throw unreachable(options, error.detail);
    throw error;
  }
}

/** Like sendApi, but every answer comes back as it is (a stream, a redirect, a refusal to read itself). */
export async function sendApiAnswer(options: ClientOptions, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(apiUrl(options, path), withCredentials(options, init)).catch((error: Error) => {
    throw unreachable(options, (error.cause as Error | undefined)?.message ?? error.message);
  });
}

const apiUrl = (options: ClientOptions, path: string) => `${options.baseUrl}/api/v1${path}`;

function withCredentials(options: ClientOptions, init: RequestInit): RequestInit {
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    ...(options.team ? { 'x-team-uid': options.team } : {}),
    ...init.headers,
  };
  return { ...init, headers };
}

function unreachable(options: ClientOptions, reason: string): Error {
  return new Error(`could not reach Hangar at ${options.baseUrl} (${reason}); is HANGAR_URL right?`);
}

/** One JSON call: the answer's body, or undefined when it has none. */
export async function callApi<T>(options: ClientOptions, method: string, path: string, body?: unknown): Promise<T> {
  const response = await sendApi(options, path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return jsonOf<T>(response);
}

/** The common CLI verb: one API call with the environment's credentials, its answer shown (platform/cli/output.ts). */
export async function callAndPrint<T>(
  method: string,
  path: string,
  body?: unknown,
  human?: (answer: T) => string,
): Promise<void> {
  show(await callApi<T>(clientOptionsFromEnv(), method, path, body), human);
}
