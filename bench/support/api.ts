import type { RunningServer } from '../../src/server.js';

/** One call to a bench server's API with the bench's key; anything but a success throws with the answer. */
export async function apiRequest(
  server: RunningServer,
  apiKey: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<any> {
  const response = await fetch(`${server.url}/api/v1${url}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  return response.json();
}
