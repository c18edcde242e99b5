import type { Query } from './database.js';

/** The team whose runs are listed, and the people who created them. */
export interface SeedTeam {
  teamUid: string;
  /** The bootstrap admin (the caller of the benchmark) first, then a few colleagues. */
  userUids: string[];
}

/** A key position in the `updated_at DESC, id DESC` ordering, as a keyset cursor carries it. */
export interface Position {
  /** Microsecond-exact text: a JS Date would drop the microseconds and skip rows. */
  updatedAt: string;
  id: string;
}

const runId = (g: string) => `md5('run-' || ${g})::uuid::text`;

/** Adds colleagues to the team so that runs have several creators and some personal runs are not the caller's. */
export async function addColleagues(query: Query, teamUid: string, count: number): Promise<string[]> {
  const rows = await query<{ uid: string }>(
    `INSERT INTO users (uid, display_name, email)
     SELECT 'benchuser' || lpad(g::text, 13, '0'), 'Colleague ' || g, 'colleague' || g || '@example.com'
     FROM generate_series(1, $1::int) AS g
     RETURNING uid`,
    [count],
  );
  const uids = rows.map((row) => row.uid);
  await query(`INSERT INTO team_members (team_uid, user_uid, role) SELECT $1, unnest($2::text[]), 'member'`, [
    teamUid,
    uids,
  ]);
  return uids;
}

/**
 * Inserts runs number `from`..`to`. Fast path for a bulk load: the secondary indexes are dropped, the rows go
 * in with one set-based statement, and the indexes are built again from their own definitions (so they stay
 * exactly what the migrations made). Maintaining them row by row, the trigram index above all, took 20 to 36 s
 * for 100k runs here, against about 2 s to insert plus 7 s to rebuild (1M: about 25 s plus 70 s).
 */
export async function seedRuns(
  query: Query,
  team: SeedTeam,
  from: number,
  to: number,
): Promise<{ insertSeconds: number; indexSeconds: number }> {
  return withRunIndexesRebuilt(query, () => insertRuns(query, team, from, to));
}

/** Runs `insert` with the secondary indexes of `runs` dropped, then builds them again (see seedRuns). */
export async function withRunIndexesRebuilt(
  query: Query,
  insert: () => Promise<void>,
): Promise<{ insertSeconds: number; indexSeconds: number }> {
  const indexes = await query<{ name: string; definition: string }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'runs'::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
  );
  for (const index of indexes) await query(`DROP INDEX "${index.name}"`);
  const started = Date.now();
  await insert();
  const inserted = Date.now();
  // Two lanes for two cores: the GIN indexes (slow to build) beside the B-trees. One statement each, so the
  // memory setting applies to the session that builds (on a pool each query may get another connection).
  const build = async (lane: typeof indexes) => {
    for (const index of lane) await query(`SET maintenance_work_mem = '256MB'; ${index.definition}`);
  };
  const isGin = (index: { definition: string }) => / USING gin /i.test(index.definition);
  await Promise.all([build(indexes.filter(isGin)), build(indexes.filter((index) => !isGin(index)))]);
  return { insertSeconds: (inserted - started) / 1000, indexSeconds: (Date.now() - inserted) / 1000 };
}

/**
 * One statement, no round trip per row. Run g was created 2 s after run g-1 and updated less than 1.5 s after
 * its creation, so `updated_at` is distinct and increasing with g, with microseconds set to exercise exact
 * cursors. One run in ten is personal; states, sources, models and creators rotate with g.
 */
async function insertRuns(query: Query, team: SeedTeam, from: number, to: number): Promise<void> {
  await query(
    `INSERT INTO runs (id, team_uid, title, prompt, state, source, execution_location, scope_type, scope_uid,
                       agent_config, model_id, creator_type, creator_uid, executor_type, executor_uid, metadata,
                       created_at, updated_at, started_at, ended_at)
     SELECT ${runId('g')}, $1, r.title,
            r.title || E'\\n\\nIn acme/' || r.repo || ', reproduce the problem, fix its cause, add a regression test '
              || 'and open a pull request. Notes: ' || md5(g::text) || ' ' || md5((g + 1)::text),
            r.state,
            (ARRAY['API', 'API', 'SCHEDULED_AGENT', 'SLACK', 'WEB_APP'])[1 + g % 5],
            'REMOTE',
            CASE WHEN g % 10 = 0 THEN 'User' ELSE 'Team' END,
            CASE WHEN g % 10 = 0 THEN r.creator ELSE $1 END,
            jsonb_build_object('model_id', r.model), r.model,
            'user', r.creator, 'user', r.creator,
            jsonb_build_object('repo', r.repo, 'ticket', 'T-' || g % 5000),
            r.created_at, r.updated_at,
            CASE WHEN r.state <> 'QUEUED' THEN r.created_at + interval '1 second' END,
            CASE WHEN r.state NOT IN ('QUEUED', 'INPROGRESS') THEN r.updated_at END
     FROM generate_series($2::int, $3::int) AS g
     CROSS JOIN LATERAL (
       SELECT (ARRAY['Fix', 'Refactor', 'Add tests for', 'Update', 'Investigate', 'Document'])[1 + g % 6] || ' '
                || (ARRAY['the login flow', 'the flaky CI job', 'the billing webhook', 'the search index',
                          'the cron scheduler', 'API pagination', 'the worker pool'])[1 + g / 6 % 7]
                || ' (#' || g || ')' AS title,
              (ARRAY['web', 'api', 'billing', 'infra'])[1 + g % 4] AS repo,
              (ARRAY['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED',
                     'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED', 'FAILED', 'FAILED',
                     'CANCELLED', 'CANCELLED', 'ERROR', 'QUEUED', 'INPROGRESS'])[1 + g % 20] AS state,
              -- g / 3, not g: otherwise every personal run (g % 10 = 0) would be the first user's.
              ($4::text[])[1 + g / 3 % cardinality($4::text[])] AS creator,
              (ARRAY['claude-sonnet-4', 'gpt-5', 'gemini-2.5-pro'])[1 + g % 3] AS model,
              timestamptz '2025-01-01 00:00:00+00' + g * interval '2 seconds' AS created_at,
              timestamptz '2025-01-01 00:00:00+00' + g * interval '2 seconds'
                + (g % 1500) * interval '1 millisecond' + (g % 997) * interval '1 microsecond' AS updated_at
     ) AS r`,
    [team.teamUid, from, to, team.userUids],
  );
}

/**
 * After a bulk load: fresh statistics and visibility map, and the dirty pages written out, so that neither the
 * planner, autovacuum nor a checkpoint acts in the middle of a measurement.
 */
export async function settle(query: Query): Promise<void> {
  await query('VACUUM (ANALYZE) runs');
  // Needs superuser (or pg_checkpoint); without it the benchmark still runs, only a little noisier.
  await query('CHECKPOINT').catch(() => undefined);
}

/** `count` positions evenly spread over runs 1..total (deep pages; they are found by primary key, not sorted). */
export async function spreadPositions(query: Query, total: number, count: number): Promise<Position[]> {
  const step = Math.max(1, Math.floor(total / count));
  return query<Position>(
    `SELECT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "updatedAt", id
     FROM runs
     WHERE id IN (SELECT ${runId('g')} FROM generate_series($1::int, $2::int, $3::int) AS g)
     ORDER BY updated_at DESC`,
    [step, total, step],
  );
}
