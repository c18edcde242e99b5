import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { callerOf } from '../platform/http/auth.js';
import { invalidRequest } from '../platform/http/errors.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import type { DB } from '../platform/db/schema.js';
import type { WorkerHub } from './hub.js';
import { workerIdProblem } from './protocol.js';
import { connectedWorkers } from './store.js';

const ConnectedWorkers = Type.Object({
  workers: Type.Array(
    Type.Object({
      worker_host: Type.String(),
      connection_count: Type.Integer(),
      connected_at: Type.String({ format: 'date-time' }),
      last_seen_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

/**
 * The worker websocket (authenticated with a team API key before the upgrade, so refusals are plain HTTP) and
 * the presence list. Presence counts connections refreshed within three heartbeats, on any replica.
 */
export function registerWorkerRoutes(parent: FastifyInstance, deps: { hub: WorkerHub; db: Kysely<DB>; heartbeatSeconds: number }): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Self-hosted workers'];

  app.get(
    '/selfhosted/worker/ws',
    {
      websocket: true,
      schema: {
        tags,
        summary: 'Websocket of a self-hosted worker (protocol: docs/worker-protocol.md)',
        querystring: Type.Object({ worker_id: Type.String({ maxLength: 200 }) }),
      },
      preValidation: async (request) => {
        const problem = workerIdProblem((request.query as { worker_id?: string }).worker_id);
        if (problem) throw invalidRequest(problem);
      },
    },
    (socket, request) => {
      void deps.hub.attach(socket, callerOf(request).teamUid, (request.query as { worker_id: string }).worker_id);
    },
  );

  app.get(
    '/agent/connected-self-hosted-workers',
    { schema: { tags, summary: "The team's connected self-hosted workers (may be briefly stale)", response: { 200: ConnectedWorkers, ...ProblemResponses } } },
    async (request) => ({ workers: await connectedWorkers(deps.db, callerOf(request).teamUid, deps.heartbeatSeconds * 3) }),
  );
}
