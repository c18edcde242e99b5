import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';

/** One setup snapshot as the database knows it (its files are on the engine's data directory, by id). */
export interface SnapshotRecord {
  id: string;
  environmentUid: string;
  teamUid: string;
  key: string;
  baseKey: string;
  commits: Record<string, string>;
  sizeBytes: number;
  createdAt: Date;
  lastUsedAt: Date;
}

/** The scope a snapshot may serve: one environment, for the team whose run made it (never another team's). */
export interface SnapshotScope {
  environmentUid: string;
  teamUid: string;
}

type Row = {
  id: string;
  environment_uid: string;
  team_uid: string;
  key: string;
  base_key: string;
  commits: Record<string, string> | string;
  size_bytes: string | number;
  created_at: Date;
  last_used_at: Date;
};

function record(row: Row): SnapshotRecord {
  return {
    id: row.id,
    environmentUid: row.environment_uid,
    teamUid: row.team_uid,
    key: row.key,
    baseKey: row.base_key,
    commits: typeof row.commits === 'string' ? JSON.parse(row.commits) : row.commits,
    sizeBytes: Number(row.size_bytes),
    createdAt: new Date(row.created_at),
    lastUsedAt: new Date(row.last_used_at),
  };
}

const COLUMNS = [
  'id',
  'environment_uid',
  'team_uid',
  'key',
  'base_key',
  'commits',
  'size_bytes',
  'created_at',
  'last_used_at',
] as const;

/**
 * The records of setup snapshots: which exist, for which environment and team, under which key. The engine makes
 * and restores the files; this says which to use. A record is 'creating' until its files are complete, and only
 * 'ready' ones are ever used; the unique key lets one of two simultaneous creators win.
 */
export class EnvironmentSnapshots {
  constructor(
    private readonly db: Kysely<DB>,
    /** Older snapshots are never used (and are removed by the engine's maintenance). */
    private readonly ttlSeconds: number,
  ) {}

  get enabled(): boolean {
    return this.ttlSeconds > 0;
  }

  private fresh() {
    return new Date(Date.now() - this.ttlSeconds * 1000);
  }

  /** The ready snapshot with exactly this key, unexpired; its use is recorded (for the least-recently-used bound). */
  async exact(scope: SnapshotScope, key: string): Promise<SnapshotRecord | undefined> {
    const row = await this.db
      .updateTable('environment_snapshots')
      .set({ last_used_at: sql`clock_timestamp()` })
      .where('environment_uid', '=', scope.environmentUid)
      .where('team_uid', '=', scope.teamUid)
      .where('key', '=', key)
      .where('state', '=', 'ready')
      .where('created_at', '>', this.fresh())
      .returning(COLUMNS)
      .executeTakeFirst();
    return row ? record(row as Row) : undefined;
  }

  /** The newest ready snapshot with this base key (same image and setup, other commits), unexpired. */
  async newest(scope: SnapshotScope, baseKey: string): Promise<SnapshotRecord | undefined> {
    const row = await this.db
      .selectFrom('environment_snapshots')
      .select(COLUMNS)
      .where('environment_uid', '=', scope.environmentUid)
      .where('team_uid', '=', scope.teamUid)
      .where('base_key', '=', baseKey)
      .where('state', '=', 'ready')
      .where('created_at', '>', this.fresh())
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    await this.db
      .updateTable('environment_snapshots')
      .set({ last_used_at: sql`clock_timestamp()` })
      .where('id', '=', row.id)
      .execute();
    return record(row as Row);
  }

  /**
   * Claims the creation of a snapshot: its new id, or undefined when one with this key exists or is being made
   * (by another execution here or on another replica). A claim left 'creating' by a dead engine stops blocking
   * once it is older than the TTL.
   */
  async claim(
    scope: SnapshotScope,
    key: string,
    baseKey: string,
    commits: Record<string, string>,
  ): Promise<string | undefined> {
    await this.db
      .deleteFrom('environment_snapshots')
      .where('environment_uid', '=', scope.environmentUid)
      .where('team_uid', '=', scope.teamUid)
      .where('key', '=', key)
      .where('created_at', '<=', this.fresh())
      .execute();
    const id = randomBytes(12).toString('hex');
    const inserted = await this.db
      .insertInto('environment_snapshots')
      .values({
        id,
        environment_uid: scope.environmentUid,
        team_uid: scope.teamUid,
        key,
        base_key: baseKey,
        commits: JSON.stringify(commits),
      })
      .onConflict((conflict) => conflict.columns(['environment_uid', 'team_uid', 'key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted?.id;
  }

  /** The files of a claimed snapshot are complete: it may be used from now on. */
  async ready(id: string, sizeBytes: number): Promise<void> {
    await this.db
      .updateTable('environment_snapshots')
      .set({ state: 'ready', size_bytes: sizeBytes, created_at: sql`clock_timestamp()` })
      .where('id', '=', id)
      .execute();
  }

  /** A snapshot's size, measured after it was made ready (a renamed workspace is measured off the execution's path). */
  async measured(id: string, sizeBytes: number): Promise<void> {
    await this.db.updateTable('environment_snapshots').set({ size_bytes: sizeBytes }).where('id', '=', id).execute();
  }

  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('environment_snapshots').where('id', 'in', ids).execute();
  }

  /** Older snapshots of the same scope and base: a newer one supersedes them. */
  async superseded(scope: SnapshotScope, baseKey: string, keep: string): Promise<string[]> {
    const rows = await this.db
      .deleteFrom('environment_snapshots')
      .where('environment_uid', '=', scope.environmentUid)
      .where('team_uid', '=', scope.teamUid)
      .where('base_key', '=', baseKey)
      .where('state', '=', 'ready')
      .where('id', '!=', keep)
      .returning('id')
      .execute();
    return rows.map((row) => row.id);
  }

  /** Which of these ids still have a record (any state): the rest are files nobody will use. */
  async existing(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('environment_snapshots').select('id').where('id', 'in', ids).execute();
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Enforces the TTL and the size bound: expired records go, then the least recently used until the ready ones
   * fit in `maxBytes`. Returns the ids removed (their files are the caller's to remove).
   */
  async expire(maxBytes: number): Promise<string[]> {
    const expired = await this.db
      .deleteFrom('environment_snapshots')
      .where('created_at', '<=', this.fresh())
      .returning('id')
      .execute();
    const ready = await this.db
      .selectFrom('environment_snapshots')
      .select(['id', 'size_bytes'])
      .where('state', '=', 'ready')
      .orderBy('last_used_at', 'desc')
      .execute();
    let total = 0;
    const over: string[] = [];
    for (const row of ready) {
      total += Number(row.size_bytes);
      if (total > maxBytes) over.push(row.id);
    }
    await this.remove(over);
    return [...expired.map((row) => row.id), ...over];
  }

  /** The newest ready snapshot of each environment for `teamUid` (what the environments list shows). */
  async newestFor(teamUid: string, environmentUids: string[]): Promise<Map<string, SnapshotRecord>> {
    if (environmentUids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('environment_snapshots')
      .select(COLUMNS)
      .where('team_uid', '=', teamUid)
      .where('environment_uid', 'in', environmentUids)
      .where('state', '=', 'ready')
      .where('created_at', '>', this.fresh())
      .orderBy('created_at', 'desc')
      .execute();
    const newest = new Map<string, SnapshotRecord>();
    for (const row of rows) if (!newest.has(row.environment_uid)) newest.set(row.environment_uid, record(row as Row));
    return newest;
  }

  /** Drops every snapshot of an environment (all teams): the next run of it is cold. Returns how many. */
  async drop(environmentUid: string): Promise<number> {
    const rows = await this.db
      .deleteFrom('environment_snapshots')
      .where('environment_uid', '=', environmentUid)
      .returning('id')
      .execute();
    return rows.length;
  }
}
