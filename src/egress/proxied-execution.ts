import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { TaskTokens } from '../execution/index.js';
import { authenticationRequired } from '../platform/http/errors.js';

/** The running execution a proxied request comes from, with what the proxies need of its run. */
export interface ProxiedExecution {
  runId: string;
  executionId: number;
  teamUid: string;
  harness: string | null;
  agentConfig: Record<string, unknown>;
}

/**
 * The request headers (and query parameter) a sandboxed client may carry its credential in: the CLIs send their
 * "API key" the way their provider takes it (x-api-key, Authorization, x-goog-api-key or ?key=). The proxies
 * strip all of them before forwarding.
 */
export const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-goog-api-key'];

function presentedToken(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && authorization.startsWith('Bearer '))
    return authorization.slice('Bearer '.length).trim();
  for (const name of ['x-api-key', 'x-goog-api-key']) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') return value.trim();
  }
  const key = (request.query as Record<string, unknown> | undefined)?.key;
  return typeof key === 'string' ? key : undefined;
}

/**
 * The execution whose task token the request carries, if it is running now on one of this server's engines (a
 * self-hosted worker's runs use that worker's own credentials): 401 otherwise.
 */
export async function proxiedExecution(
  db: Kysely<DB>,
  tokens: TaskTokens,
  request: FastifyRequest,
): Promise<ProxiedExecution> {
  const token = presentedToken(request);
  const claim = token === undefined ? null : tokens.verify(token);
  if (!claim) throw authenticationRequired('the harness-support proxies need the task token of a running execution');
  const row = await db
    .selectFrom('runs')
    .select(['team_uid', 'harness', 'agent_config'])
    .where('id', '=', claim.runId)
    .where('execution_id', '=', claim.executionId)
    .where('sandbox_running', '=', true)
    .where('worker_host', 'is', null)
    .executeTakeFirst();
  if (!row)
    throw authenticationRequired(
      "this task token belongs to an execution that is not running on this server's engines",
    );
  return { ...claim, teamUid: row.team_uid, harness: row.harness, agentConfig: row.agent_config };
}
