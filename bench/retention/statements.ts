// PGlite's maintenance statements after a large retention pass, each timed on its own: seeds BENCH_RUNS runs
// (default 100000; nine in ten ended), deletes the older half of the ended ones in one statement (the dead rows a
// pass leaves; how they were deleted does not matter to what follows), then times the ANALYZE variants (taking
// turns) and either `VACUUM runs` at once ("full") or the heap-only vacuum and the deferred full one ("heap first").
// A fresh database per round; the two kinds of round alternate, BENCH_ROUNDS of each (default 2). After each
// ANALYZE it prints the plans that depend on the statistics (the list's first page, the search for two words), to
// see whether a smaller sample changes them (src/platform/db/pglite-upkeep.ts, PGLITE_STATISTICS_TARGET).
// `node --import tsx bench/retention/statements.ts`. Figures go in bench/RESULTS.md (Run retention).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { defaultOwner, kyselyQuery } from '../runs-api/database.js';
import { seedRuns } from '../runs-api/seed.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

const timings = new Map<string, number[]>();

async function round(kind: 'full' | 'heap first'): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-statements-'));
  const server = await startServer(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: `hgr_bench_${randomBytes(16).toString('hex')}`,
      HANGAR_LOG_LEVEL: 'silent',
    }),
  );
  try {
    const db = server.database.db;
    const owner = await defaultOwner(db);
    await seedRuns(kyselyQuery(db), { teamUid: owner.teamUid, userUids: [owner.userUid] }, 1, RUNS);
    await sql`VACUUM (ANALYZE) runs`.execute(db);
    await sql`CHECKPOINT`.execute(db);
    const deleted = await sql`
      DELETE FROM runs WHERE ended_at < (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ended_at) FROM runs)`.execute(
      db,
    );
    const dead = async () => {
      await sql`SELECT pg_stat_force_next_flush()`.execute(db);
      const row = await sql<{ dead: string; pages: string }>`
        SELECT n_dead_tup AS dead, pg_relation_size('runs') / 8192 AS pages FROM pg_stat_user_tables
        WHERE relname = 'runs'`.execute(db);
      return `dead ${row.rows[0]!.dead}, heap pages ${row.rows[0]!.pages}`;
    };
    console.error(`${kind}: deleted ${deleted.numAffectedRows} of ${RUNS}; ${await dead()}`);
    const time = async (label: string, statement: () => Promise<unknown>) => {
      const started = performance.now();
      await statement();
      const ms = performance.now() - started;
      timings.set(label, [...(timings.get(label) ?? []), ms]);
      console.error(`  ${label}: ${ms.toFixed(1)} ms (${await dead()})`);
      if (label.startsWith('ANALYZE')) console.error(`    plans: ${await plans()}`);
    };
    // The plans that depend on the statistics: the list's first page, and the search for a rare and a common word
    // (each word: a substring or a close spelling, as src/runs/store.ts searches), each a plan of its own.
    const plans = async () => {
      const shapes: string[] = [];
      for (const word of ['', 'pagination', 'fix']) {
        const search = word ? sql`AND (search_text LIKE ${`%${word}%`} OR ${word} <% search_text)` : sql``;
        const plan = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM runs WHERE team_uid = ${owner.teamUid}
          ${search} ORDER BY updated_at DESC, id DESC LIMIT 21`.execute(db);
        const nodes = plan.rows.map((row) => row['QUERY PLAN']).filter((line) => /Scan|Sort|Limit/.test(line));
        shapes.push(`${word || 'list'}: ${nodes.map((line) => line.trim().replace(/\s+\(cost.*$/, '')).join(' / ')}`);
      }
      return shapes.join('; ');
    };
    for (let turn = 0; turn < 2; turn++) {
      await time('ANALYZE runs (statistics target 100)', () => sql`ANALYZE runs`.execute(db));
      for (const target of [10, 30])
        await time(`ANALYZE runs (statistics target ${target})`, () =>
          db.transaction().execute(async (trx) => {
            await sql.raw(`SET LOCAL default_statistics_target = ${target}`).execute(trx);
            await sql`ANALYZE runs`.execute(trx);
          }),
        );
      await time('ANALYZE runs (narrow columns, target 100)', () =>
        sql
          .raw(`ANALYZE runs (id, team_uid, state, source, scope_type, scope_uid, creator_uid, created_at, updated_at,
          ended_at, started_at, schedule_id, parent_run_id, conversation_id, environment_id, worker_host, model_id,
          skill_spec, lease_expires_at, title)`)
          .execute(db),
      );
    }
    if (kind === 'full') await time('VACUUM runs, right after the delete', () => sql`VACUUM runs`.execute(db));
    else {
      await time('VACUUM (INDEX_CLEANUP OFF) runs', () => sql`VACUUM (INDEX_CLEANUP OFF) runs`.execute(db));
      await time('VACUUM runs, after the heap-only one', () => sql`VACUUM runs`.execute(db));
    }
    await time('VACUUM runs, nothing left', () => sql`VACUUM runs`.execute(db));
    if (kind === 'full') {
      const sizes = await sql<{ name: string; pages: string }>`
        SELECT c.relname AS name, pg_relation_size(c.oid) / 8192 AS pages FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'runs'::regclass ORDER BY 2 DESC`.execute(db);
      console.error(`  index pages: ${sizes.rows.map((row) => `${row.name} ${row.pages}`).join(', ')}`);
    }
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

for (let index = 0; index < ROUNDS; index++) {
  await round('full');
  await round('heap first');
}
console.log('| statement (PGlite, after deleting the older half of the ended runs) | each round, ms |');
console.log('|---|---|');
for (const [label, values] of timings) console.log(`| ${label} | ${values.map((v) => v.toFixed(0)).join(', ')} |`);
