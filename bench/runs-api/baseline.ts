import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { CreateRunBody } from '../../src/runs/schemas.js';
import type { Query } from './database.js';

/**
 * The least a server can do for the same two requests: a bare Fastify instance (no auth, no logger, no
 * hooks) with one hand-written statement per request against the same `runs` table, so the ratio measures
 * what Hangar adds on top (auth lookup, query builder, visibility rules, profiles, cursor signing, rendering).
 */
export interface Baseline {
  url: string;
  close(): Promise<void>;
}

interface CreateBody {
  prompt: string;
  title?: string;
  metadata?: Record<string, string>;
  config?: { model_id?: string };
}

/** The body both sides of the create scenario get (bench/ingress measures its baseline with it too). */
export const CREATE_BODY = JSON.stringify({
  prompt: 'Fix the flaky billing webhook test in acme/billing, find the race and open a pull request.',
  title: 'Fix flaky billing webhook test',
  metadata: { ticket: 'T-1234' },
  config: { model_id: 'claude-sonnet-4' },
});

/** The columns a listed run is rendered from (Hangar adds creator/executor profiles and artifacts to these). */
const RUN_COLUMNS = `id, title, prompt, state, source, execution_location, scope_type, scope_uid, agent_config,
  skill_spec, worker_host, schedule, parent_run_id, conversation_id, creator_type, creator_uid, executor_type,
  executor_uid, metadata, status_message, request_usage, session_id, created_at, updated_at, started_at, ended_at,
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_updated_at`;

/** An unsigned cursor (base64url JSON of the last key): the minimum a keyset page needs. */
export const baselineCursor = (updatedAt: string, id: string) =>
  Buffer.from(JSON.stringify([updatedAt, id])).toString('base64url');

export async function startBaseline(query: Query, team: { teamUid: string; userUid: string }): Promise<Baseline> {
  const app = Fastify({ logger: false });

  // The same wire schema object Hangar validates with, so validation costs the same on both sides.
  app.post<{ Body: CreateBody }>('/runs', { schema: { body: CreateRunBody } }, async (request) => {
    const { prompt, title, metadata = {}, config = {} } = request.body;
    const id = randomUUID();
    await query(
      `INSERT INTO runs (id, team_uid, title, prompt, state, source, execution_location, scope_type, scope_uid,
                         agent_config, model_id, creator_type, creator_uid, executor_type, executor_uid, metadata)
       VALUES ($1, $2, $3, $4, 'QUEUED', 'API', 'REMOTE', 'Team', $2, $5, $6, 'user', $7, 'user', $7, $8)`,
      [
        id,
        team.teamUid,
        title ?? prompt.slice(0, 80),
        prompt,
        JSON.stringify(config),
        config.model_id ?? null,
        team.userUid,
        JSON.stringify(metadata),
      ],
    );
    return { run_id: id, task_id: id, state: 'QUEUED' };
  });

  app.get<{ Querystring: { limit?: string; cursor?: string } }>('/runs', async (request) => {
    const limit = Number(request.query.limit ?? 20);
    const params: unknown[] = [team.teamUid, limit + 1];
    let after = '';
    if (request.query.cursor) {
      const [updatedAt, id] = JSON.parse(Buffer.from(request.query.cursor, 'base64url').toString('utf8')) as [
        string,
        string,
      ];
      params.push(updatedAt, id);
      after = 'AND (updated_at, id) < ($3::timestamptz, $4)';
    }
    const rows = await query<Record<string, unknown> & { id: string; cursor_updated_at: string }>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE team_uid = $1 ${after} ORDER BY updated_at DESC, id DESC LIMIT $2`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const hasNext = rows.length > limit;
    return {
      runs: page,
      page_info: {
        has_next_page: hasNext,
        next_cursor: hasNext && last ? baselineCursor(last.cursor_updated_at, last.id) : undefined,
      },
    };
  });

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
