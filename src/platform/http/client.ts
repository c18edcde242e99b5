/** A small client for Hangar's own API, used by the `hangar` CLI verbs. */
export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  team?: string | undefined;
}

export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const problem = body as { error?: string; detail?: string } | null;
    super(`HTTP ${status}: ${problem?.error ?? problem?.detail ?? JSON.stringify(body)}`);
  }
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

export async function callApi<T>(options: ClientOptions, method: string, path: string, body?: unknown): Promise<T> {
  const url = `${options.baseUrl}/api/v1${path}`;
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      ...(options.team ? { 'x-team-uid': options.team } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: Error) => {
    const cause = (error.cause as Error | undefined)?.message ?? error.message;
    throw new Error(`could not reach Hangar at ${options.baseUrl} (${cause}); is HANGAR_URL right?`);
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiClientError(response.status, parsed);
  return parsed as T;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The common CLI verb: one API call with the environment's credentials, its answer printed as JSON. */
export async function callAndPrint(method: string, path: string, body?: unknown): Promise<void> {
  const result = await callApi(clientOptionsFromEnv(), method, path, body);
  if (result !== null) printJson(result);
}
