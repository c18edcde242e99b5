import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import type { DB } from '../database.js';
import type { CursorValue } from '../platform/http/pagination.js';
import { TERMINAL_STATES } from './lifecycle/states.js';
import type { RunItem } from './schemas.js';
import { searchWordMatches, withSearchThreshold } from './search-match.js';
import type { RunsTable } from './tables.js';
import { type Visibility, visible } from './visibility.js';

/** Reads of runs and their timelines. Every write goes through RunLifecycle (./lifecycle). */

export { type Visibility, visible };

export interface Profile {
  display_name?: string;
  email?: string | null;
}

/** The columns a run is shown with (selectRuns). */
const RUN_COLUMNS = [
  'id',
  'team_uid',
  'title',
  'prompt',
  'state',
  'source',
  'execution_location',
  'scope_type',
  'scope_uid',
  'agent_config',
  'model_id',
  'skill_spec',
  'agent_skill',
  'worker_host',
  'schedule',
  'parent_run_id',
  'conversation_id',
  'creator_type',
  'creator_uid',
  'executor_type',
  'executor_uid',
  'metadata',
  'status_message',
  'request_usage',
  'session_id',
  'created_at',
  'updated_at',
  'started_at',
  'ended_at',
  'claimed_at',
  'agent_started_at',
  'agent_seconds',
  'sandbox_running',
  'debug_session',
  'root_run_id',
  'automation_id',
  'factory_uid',
  'trigger_url',
] as const satisfies ReadonlyArray<keyof RunsTable>;

/** A row as PostgreSQL writes it in JSON: timestamps become text (ISO 8601 with microseconds and an offset). */
type AsJson<Row> = {
  [Column in keyof Row]: Row[Column] extends Date
    ? string
    : Row[Column] extends Date | null
      ? string | null
      : Row[Column];
};

type StoredRun = AsJson<Pick<Selectable<RunsTable>, (typeof RUN_COLUMNS)[number]>>;

export interface RunRow extends StoredRun {
  creator_profile: Profile | null;
  executor_profile: Profile | null;
  artifacts: { artifact_type: string; created_at: string; data: Record<string, unknown> }[];
  scores: Array<Omit<RunItem['scores'][number], 'created_at'> & { created_at: string }>;
}

/** The creator and executor profiles, artifacts and judge scores of a page of runs, keyed by uid or run id. */
interface PageDetails {
  users: Record<string, Profile> | null;
  agents: Record<string, Profile> | null;
  artifacts: Record<string, RunRow['artifacts']> | null;
  scores: Record<string, RunRow['scores']> | null;
}

/**
 * The details of the runs in the CTE `page`, computed once for the whole page (PostgreSQL runs an uncorrelated
 * subquery once) rather than by subqueries per row.
 */
const PAGE_DETAILS = sql<PageDetails>`(SELECT json_build_object(
  'users', (SELECT json_object_agg(u.uid, json_build_object('display_name', u.display_name, 'email', u.email))
    FROM users u WHERE u.uid IN (SELECT creator_uid FROM page UNION SELECT executor_uid FROM page)),
  'agents', (SELECT json_object_agg(a.uid, json_build_object('display_name', a.name))
    FROM agent_identities a WHERE a.uid IN (SELECT creator_uid FROM page UNION SELECT executor_uid FROM page)),
  'artifacts', (SELECT json_object_agg(run_id, items) FROM (
    SELECT a.run_id, json_agg(json_build_object('artifact_type', a.artifact_type, 'created_at', a.created_at, 'data', a.data)
      ORDER BY a.created_at, a.uid) AS items
    FROM artifacts a WHERE a.run_id IN (SELECT id FROM page) GROUP BY a.run_id) per_run),
  'scores', (SELECT json_object_agg(scored_run_id, items) FROM (
    SELECT s.scored_run_id, json_agg(json_build_object('scorer_id', s.scorer_id, 'scorer_name', c.name,
        'classification', s.classification, 'score', s.score, 'passed', s.passed, 'failed', s.failed, 'reason', s.reason,
        'judge_run_id', s.judge_run_id, 'created_at', s.created_at) ORDER BY s.created_at, s.scorer_id) AS items
    FROM run_scores s JOIN scorers c ON c.id = s.scorer_id WHERE s.scored_run_id IN (SELECT id FROM page)
    GROUP BY s.scored_run_id) per_run)))`;

/**
 * Runs the page query with the creator and executor profiles, the artifacts and the judge scores of its runs, in
 * one statement that answers one JSON document: a list is one round trip, and Node parses one JSON value instead
 * of 30 typed columns per row (that parsing was the largest part of a list's CPU in Node). `order` sorts the page
 * again by the key columns of the `page` CTE; a user's profile wins over an agent's of the same uid.
 */
async function selectWithDetails(
  db: Kysely<DB>,
  pageQuery: Expression<unknown>,
  order: KeyColumn[] = [],
): Promise<RunRow[]> {
  const orderBy = order.length
    ? sql`ORDER BY ${sql.join(order.map((column) => sql`${column.expression} ${sql.raw(column.direction)}`))}`
    : sql``;
  const result = await sql<{ page: { runs: StoredRun[] | null; details: PageDetails } }>`
    WITH page AS (${pageQuery})
    SELECT json_build_object('runs', (SELECT json_agg(page ${orderBy}) FROM page), 'details', ${PAGE_DETAILS}) AS page`.execute(
    db,
  );
  const { runs, details } = result.rows[0]!.page;
  const profile = (uid: string) => details.users?.[uid] ?? details.agents?.[uid] ?? null;
  // The rows are completed in place: copying 30 columns per row cost more than the rest of this function.
  return (runs ?? []).map((stored) => {
    const run = stored as StoredRun & Partial<RunRow>;
    run.creator_profile = profile(run.creator_uid);
    run.executor_profile = profile(run.executor_uid);
    run.artifacts = details.artifacts?.[run.id] ?? [];
    run.scores = details.scores?.[run.id] ?? [];
    return run as RunRow;
  });
}

function selectRuns(db: Kysely<DB>) {
  return db.selectFrom('runs').select(RUN_COLUMNS.map((column) => `runs.${column}` as const));
}

export async function findRun(db: Kysely<DB>, who: Visibility, runId: string): Promise<RunRow | undefined> {
  const query = selectRuns(db)
    .where((eb) => visible(eb, who))
    .where('runs.id', '=', runId);
  return (await selectWithDetails(db, query))[0];
}

/** What a child run takes from its parent: its metadata and the root of its tree. */
export async function runLineage(
  db: Kysely<DB>,
  who: Visibility,
  runId: string,
): Promise<{ id: string; metadata: Record<string, string>; root_run_id: string | null } | undefined> {
  return db
    .selectFrom('runs')
    .select(['id', 'metadata', 'root_run_id'])
    .where((eb) => visible(eb, who))
    .where('id', '=', runId)
    .executeTakeFirst();
}

/** What decides which team secrets a run receives: its config, executor and environment. */
export async function secretContext(
  db: Kysely<DB>,
  who: Visibility,
  runId: string,
): Promise<
  | {
      agent_config: Record<string, unknown>;
      executor_type: 'user' | 'service_account';
      executor_uid: string;
      environment_id: string | null;
    }
  | undefined
> {
  return db
    .selectFrom('runs')
    .select(['agent_config', 'executor_type', 'executor_uid', 'environment_id'])
    .where((eb) => visible(eb, who))
    .where('id', '=', runId)
    .executeTakeFirst();
}

export async function runExists(db: Kysely<DB>, who: Visibility, runId: string): Promise<boolean> {
  const row = await db
    .selectFrom('runs')
    .select('id')
    .where((eb) => visible(eb, who))
    .where('id', '=', runId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The states of those of `runIds` that have ended (other slices tell outcomes from it, e.g. GitHub's replies). */
export async function endedRunStates(db: Kysely<DB>, runIds: readonly string[]): Promise<Map<string, string>> {
  if (runIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('runs')
    .select(['id', 'state'])
    .where('id', 'in', [...runIds])
    .where('state', 'in', [...TERMINAL_STATES])
    .execute();
  return new Map(rows.map((row) => [row.id, row.state]));
}

export async function conversationExists(db: Kysely<DB>, who: Visibility, conversationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('runs')
    .select('id')
    .where((eb) => visible(eb, who))
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return row !== undefined;
}

export type SortBy = 'updated_at' | 'created_at' | 'title' | 'agent';

export interface RunFilters {
  states?: string[];
  configName?: string;
  modelId?: string;
  creator?: string;
  executor?: string;
  source?: string;
  executionLocation?: string;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  /** null selects runs without an environment. */
  environmentId?: string | null;
  skillSpec?: string;
  scheduleId?: string;
  ancestorRunId?: string;
  metadata?: Record<string, string>;
  artifactType?: string;
  /** Every word must be found in the run's title, prompt or skill spec (see searchWordMatches). */
  searchWords?: string[];
  /** The search names this run (its ID or URL): it matches too, whatever the words. */
  searchRunId?: string;
  automationIds?: string[];
  factoryUids?: string[];
}

interface KeyColumn {
  expression: Expression<CursorValue>;
  /** How a cursor value is turned back into SQL (timestamps travel as exact text). */
  fromCursor: (value: CursorValue) => Expression<unknown>;
  direction: 'asc' | 'desc';
}

/**
 * The ordered key columns of each sort; every ordering ends in the unique id so the order is total. `table` is
 * `runs` in the page query, `page` where the page is sorted again around its details.
 */
function keyColumns(sortBy: SortBy, order: 'asc' | 'desc', table: 'runs' | 'page' = 'runs'): KeyColumn[] {
  const plain = (value: CursorValue) => sql.val(value);
  const timestamp = (value: CursorValue) => sql`${value}::timestamptz`;
  const column = (name: 'id' | 'created_at' | 'updated_at' | 'title' | 'skill_spec') =>
    sql.ref<CursorValue>(`${table}.${name}`);
  const id: KeyColumn = { expression: column('id'), fromCursor: plain, direction: order };
  switch (sortBy) {
    case 'updated_at':
    case 'created_at':
      return [{ expression: column(sortBy), fromCursor: timestamp, direction: order }, id];
    case 'title':
      return [{ expression: column('title'), fromCursor: plain, direction: order }, id];
    case 'agent':
      // Runs without a skill come last in either direction.
      return [
        {
          expression: sql`(${column('skill_spec')} IS NULL)`,
          fromCursor: (value) => sql`${value}::boolean`,
          direction: 'asc',
        },
        { expression: sql`coalesce(${column('skill_spec')}, '')`, fromCursor: plain, direction: order },
        id,
      ];
  }
}

/**
 * The key of a listed run under `sortBy`, as it goes into the next-page cursor. Timestamps are PostgreSQL's own
 * JSON text, exact to the microsecond (a JS Date would drop microseconds and make cursors skip rows).
 */
export function sortKey(run: RunRow, sortBy: SortBy): CursorValue[] {
  switch (sortBy) {
    case 'updated_at':
    case 'created_at':
      return [run[sortBy], run.id];
    case 'title':
      return [run.title, run.id];
    case 'agent':
      return [run.skill_spec === null, run.skill_spec ?? '', run.id];
  }
}

/** Rows strictly after the cursor position, for any mix of column directions. */
function afterPosition(columns: KeyColumn[], values: CursorValue[]): Expression<SqlBool> {
  const uniform = columns.every((column) => column.direction === columns[0]!.direction);
  if (uniform) {
    // A row comparison lets PostgreSQL walk the sort index directly.
    const operator = columns[0]!.direction === 'asc' ? sql`>` : sql`<`;
    const left = sql.join(columns.map((column) => column.expression));
    const right = sql.join(columns.map((column, i) => column.fromCursor(values[i]!)));
    return sql<SqlBool>`(${left}) ${operator} (${right})`;
  }
  const alternatives = columns.map((column, i) => {
    const equalPrefix = columns
      .slice(0, i)
      .map((prior, j) => sql`${prior.expression} = ${prior.fromCursor(values[j]!)}`);
    const operator = column.direction === 'asc' ? sql`>` : sql`<`;
    return sql.join(
      [...equalPrefix, sql`${column.expression} ${operator} ${column.fromCursor(values[i]!)}`],
      sql` AND `,
    );
  });
  return sql<SqlBool>`(${sql.join(
    alternatives.map((alternative) => sql`(${alternative})`),
    sql` OR `,
  )})`;
}

export function keyWidth(sortBy: SortBy): number {
  return sortBy === 'agent' ? 3 : 2;
}

export async function listRuns(
  db: Kysely<DB>,
  who: Visibility,
  filters: RunFilters,
  page: { sortBy: SortBy; order: 'asc' | 'desc'; after: CursorValue[] | null; limit: number },
): Promise<RunRow[]> {
  // A search needs its similarity threshold set for the query (see search-match.ts); a plain list, no transaction.
  if (filters.searchWords === undefined) return listRunsWith(db, who, filters, page);
  return withSearchThreshold(db, (trx) => listRunsWith(trx, who, filters, page));
}

async function listRunsWith(
  db: Kysely<DB>,
  who: Visibility,
  filters: RunFilters,
  page: { sortBy: SortBy; order: 'asc' | 'desc'; after: CursorValue[] | null; limit: number },
): Promise<RunRow[]> {
  const columns = keyColumns(page.sortBy, page.order);
  let query = selectRuns(db).where((eb) => visible(eb, who));
  if (filters.states?.length) query = query.where('runs.state', 'in', filters.states);
  if (filters.configName !== undefined) query = query.where('runs.config_name', '=', filters.configName);
  if (filters.modelId !== undefined) query = query.where('runs.model_id', '=', filters.modelId);
  if (filters.creator !== undefined) query = query.where('runs.creator_uid', '=', filters.creator);
  if (filters.executor !== undefined) query = query.where('runs.executor_uid', '=', filters.executor);
  if (filters.source !== undefined) query = query.where('runs.source', '=', filters.source);
  if (filters.executionLocation !== undefined)
    query = query.where('runs.execution_location', '=', filters.executionLocation);
  if (filters.createdAfter !== undefined)
    query = query.where('runs.created_at', '>', sql<Date>`${filters.createdAfter}::timestamptz`);
  if (filters.createdBefore !== undefined)
    query = query.where('runs.created_at', '<', sql<Date>`${filters.createdBefore}::timestamptz`);
  if (filters.updatedAfter !== undefined)
    query = query.where('runs.updated_at', '>', sql<Date>`${filters.updatedAfter}::timestamptz`);
  if (filters.environmentId === null) query = query.where('runs.environment_id', 'is', null);
  else if (filters.environmentId !== undefined) query = query.where('runs.environment_id', '=', filters.environmentId);
  if (filters.skillSpec !== undefined) query = query.where('runs.skill_spec', '=', filters.skillSpec);
  if (filters.scheduleId !== undefined) query = query.where('runs.schedule_id', '=', filters.scheduleId);
  if (filters.ancestorRunId !== undefined) {
    query = query.where(sql<SqlBool>`runs.id IN (
      WITH RECURSIVE descendants(id) AS (
        SELECT id FROM runs WHERE parent_run_id = ${filters.ancestorRunId}
        UNION
        SELECT child.id FROM runs child JOIN descendants d ON child.parent_run_id = d.id
      ) SELECT id FROM descendants)`);
  }
  if (filters.metadata !== undefined)
    query = query.where(sql<SqlBool>`runs.metadata @> ${JSON.stringify(filters.metadata)}::jsonb`);
  if (filters.artifactType !== undefined) {
    query = query.where(
      sql<SqlBool>`EXISTS (SELECT 1 FROM artifacts a WHERE a.run_id = runs.id AND a.artifact_type = ${filters.artifactType})`,
    );
  }
  if (filters.automationIds?.length) query = query.where('runs.automation_id', 'in', filters.automationIds);
  if (filters.factoryUids?.length) query = query.where('runs.factory_uid', 'in', filters.factoryUids);
  if (filters.searchWords !== undefined) {
    const words = filters.searchWords;
    const runId = filters.searchRunId;
    if (runId === undefined) for (const word of words) query = query.where(searchWordMatches(word));
    else
      query = query.where(
        sql<SqlBool>`(runs.id = ${runId} OR (${sql.join(words.map(searchWordMatches), sql` AND `)}))`,
      );
  }
  if (page.after) query = query.where(afterPosition(columns, page.after));
  for (const column of columns) query = query.orderBy(column.expression, column.direction);
  // The limit goes into the text: with it as a parameter PostgreSQL estimates a generic plan for a tenth of the
  // team's runs, finds it dearer than planning afresh, and plans every execution again (1.45 ms a list here,
  // against 0.8 ms once the prepared statement keeps its plan).
  return selectWithDetails(db, query.limit(sql.lit(page.limit)), keyColumns(page.sortBy, page.order, 'page'));
}

export async function listEvents(db: Kysely<DB>, runId: string) {
  return db
    .selectFrom('run_events')
    .select(['event_uuid', 'run_id', 'execution_id', 'event_type', 'occurred_at', 'payload'])
    .where('run_id', '=', runId)
    .orderBy('seq')
    .execute();
}
