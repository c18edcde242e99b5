import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../database.js';
import { callerOf } from '../identities/index.js';
import { authenticationRequired, invalidRequest, upgradeRequired } from '../platform/http/errors.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import type { WorkerHub } from './hub.js';
import { checkWorkerId, type WorkerCredential, type WorkerKeyAuthenticator } from './keys/authenticate.js';
import { CreatedWorkerKey, CreateWorkerKeyBody, WorkerKeyList, WorkerKeyParams } from './keys/schemas.js';
import type { WorkerKeysService } from './keys/service.js';
import { connectedWorkers } from './store.js';
import { workerIdProblem } from './worker-id.js';

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

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The worker websocket, its keys and the presence list. The websocket takes a worker key, not an API key: it is
 * checked before the upgrade (so refusals are plain HTTP problems), by the route itself since the API-key hook
 * would refuse it. Presence counts connections refreshed within three heartbeats, on any replica.
 */
export function registerWorkerRoutes(
  parent: FastifyInstance,
  deps: {
    hub: WorkerHub;
    db: Kysely<DB>;
    heartbeatSeconds: number;
    workerKeys: WorkerKeyAuthenticator;
    keys: WorkerKeysService;
    /** A run pod's execution credential (docs/kubernetes.md): the execution it names, or null when it is not one. */
    executionCredential?: (token: string) => { runId: string; executionId: number } | null;
  },
): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Self-hosted workers'];
  const credentials = new WeakMap<FastifyRequest, WorkerCredential>();
  const executions = new WeakMap<FastifyRequest, { runId: string; executionId: number }>();

  app.route({
    method: 'GET',
    url: '/selfhosted/worker/ws',
    config: { public: true },
    schema: {
      // A websocket, not an HTTP operation: its protocol is docs/worker-protocol.md, not the OpenAPI document.
      hide: true,
      tags,
      summary: 'Websocket of a self-hosted worker, opened with a worker key (protocol: docs/worker-protocol.md)',
      querystring: Type.Object({ worker_id: Type.String({ maxLength: 200 }) }),
    },
    onRequest: async (request) => {
      // Before the key check, so that any plain request (GET or HEAD) learns what this URL needs, key or not.
      if (!request.ws)
        throw upgradeRequired(
          'this is the self-hosted worker websocket: connect with a websocket upgrade (docs/worker-protocol.md)',
          'websocket',
        );
      const bearer = /^Bearer\s+(hgx_\S+)\s*$/i.exec(header(request, 'authorization') ?? '')?.[1];
      if (bearer !== undefined && deps.executionCredential) {
        // Never tried as a worker key: it opens its own execution's session, or nothing.
        const execution = deps.executionCredential(bearer);
        if (!execution) throw authenticationRequired('the execution credential is not valid');
        executions.set(request, execution);
        return;
      }
      credentials.set(
        request,
        await deps.workerKeys.credential(
          header(request, 'authorization'),
          header(request, 'x-team-uid') ?? header(request, 'x-warp-team-uid'),
          request.ip,
        ),
      );
    },
    // After validation: only the schema makes worker_id one string (a repeated or bracketed key is refused there).
    preHandler: async (request) => {
      const { worker_id: workerId } = request.query;
      const problem = workerIdProblem(workerId);
      if (problem) throw invalidRequest(problem);
      if (executions.has(request)) return;
      checkWorkerId(credentials.get(request)!, workerId);
    },
    // Only reached without an upgrade if the hooks above change; an HTTP answer all the same, never an empty 404.
    handler: async () => {
      throw upgradeRequired('connect with a websocket upgrade (docs/worker-protocol.md)', 'websocket');
    },
    wsHandler: (socket, request) => {
      const execution = executions.get(request);
      if (execution) {
        void deps.hub.attachExecution(socket, execution);
        return;
      }
      void deps.hub.attach(socket, credentials.get(request)!, request.query.worker_id);
    },
  });

  app.post(
    '/selfhosted/worker-keys',
    {
      schema: {
        tags,
        summary: 'Create a worker key for a worker ID or pattern (team admin; the key is shown once)',
        description:
          'A worker key opens the worker websocket for the worker IDs it names, and nothing else of the API.',
        body: CreateWorkerKeyBody,
        response: { 201: CreatedWorkerKey, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.keys.create(callerOf(request), request.body)),
  );
  app.get(
    '/selfhosted/worker-keys',
    {
      schema: {
        tags,
        summary: "The team's worker keys (never the keys themselves)",
        response: { 200: WorkerKeyList, ...ProblemResponses },
      },
    },
    async (request) => deps.keys.list(callerOf(request)),
  );
  app.delete(
    '/selfhosted/worker-keys/:keyUid',
    {
      schema: {
        tags,
        summary: 'Revoke a worker key (team admin): refused at the next connect, open connections are closed',
        params: WorkerKeyParams,
        response: { 204: Type.Null(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await deps.keys.revoke(callerOf(request), request.params.keyUid);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/agent/connected-self-hosted-workers',
    {
      schema: {
        tags,
        summary: "The team's connected self-hosted workers (may be briefly stale)",
        response: { 200: ConnectedWorkers, ...ProblemResponses },
      },
    },
    async (request) => ({
      workers: await connectedWorkers(deps.db, callerOf(request).teamUid, deps.heartbeatSeconds * 3),
    }),
  );
}
