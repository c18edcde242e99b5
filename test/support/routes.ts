/**
 * Every route a Fastify app serves, read from its router: the OpenAPI document leaves out the hidden routes (the
 * webhook ingress, downloads, the harness-support proxies, the worker websocket, the dashboard's files), and a test
 * that means "every route" must not depend on someone remembering to list a new one.
 */
import type { FastifyInstance } from 'fastify';

export interface ServedRoute {
  method: string;
  /** Fastify's pattern, e.g. `/api/v1/agent/runs/:runId`, `/api/v1/harness-support/model-proxy/:provider/*`. */
  url: string;
}

/**
 * Fastify has no route listing, only `printRoutes()`: a drawing of its radix tree, one node a line, each line the
 * part of the path its parent does not already spell, followed by `(METHODS)` when routes end there. The drawing
 * is read back here by indentation (four columns a level).
 */
export function servedRoutes(app: FastifyInstance): ServedRoute[] {
  const prefixes: string[] = [];
  const routes: ServedRoute[] = [];
  for (const line of app.printRoutes().split('\n')) {
    const start = line.search(/[^│├└─ ]/);
    if (start === -1) continue;
    const level = Math.floor(start / 4);
    const match = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.slice(start))!;
    const url = (prefixes[level - 1] ?? '') + match[1];
    prefixes[level] = url;
    prefixes.length = level + 1;
    for (const method of match[2]?.split(', ') ?? []) routes.push({ method, url });
  }
  if (routes.length === 0) throw new Error(`could not read the routes from:\n${app.printRoutes()}`);
  return routes;
}

/** `/agent/runs/{runId}` (OpenAPI) → `/agent/runs/:runId` (Fastify). */
export function fastifyPattern(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}
