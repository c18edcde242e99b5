import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, test } from 'node:test';
import {
  createTestDatabase,
  spawnServer,
  startTestServer,
  type TestDatabase,
  type TestServer,
} from '../support/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

let database: TestDatabase | undefined;
let api: TestServer | undefined;
const engines: Array<{ child: ChildProcess; output: () => string }> = [];

after(async () => {
  for (const engine of engines) engine.child.kill('SIGKILL');
  await api?.stop();
  await database?.drop();
});

test('three engine replicas on one PostgreSQL start exactly one run per tick', {
  skip: !onPostgres && 'replicas need PostgreSQL (PGlite is single-process)',
}, async () => {
  database = await createTestDatabase();
  const server = await startTestServer({}, { role: 'api', database });
  api = server;
  for (let i = 0; i < 3; i++) {
    engines.push(
      await spawnServer({ DATABASE_URL: database.databaseUrl!, HANGAR_DATA_DIR: database.dataDir }, [
        '--role',
        'engine',
      ]),
    );
  }
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await server.request('POST', '/agent/schedules', {
      body: { name: `replica ${i}`, cron_schedule: '* * * * * *', prompt: 'tick', enabled: true },
    });
    assert.equal(response.status, 201);
    ids.push(response.body.id);
  }
  const startedAt = Date.now();
  // Not a wait for an event: the replicas tick for eight seconds of cron, which the test then counts.
  await sleep(8000);
  for (const id of ids) await server.request('POST', `/agent/schedules/${id}/pause`);
  const elapsedSeconds = Math.floor((Date.now() - startedAt) / 1000);
  // A tick already under way when the pause lands may still commit: no event of the engine processes tells of it.
  await sleep(500);

  for (const id of ids) {
    const rows = await server.db
      .selectFrom('runs')
      .select(['schedule_tick'])
      .where('schedule_id', '=', id)
      .orderBy('schedule_tick')
      .execute();
    const ticks = rows.map((row) => row.schedule_tick!.getTime());
    assert.equal(new Set(ticks).size, ticks.length, 'no tick started twice');
    for (let i = 1; i < ticks.length; i++) assert.ok(ticks[i]! > ticks[i - 1]!, 'ticks strictly increase');
    // Every second of the window fired (allowing for the edges of the window).
    assert.ok(ticks.length >= elapsedSeconds - 2, `only ${ticks.length} runs in ${elapsedSeconds} s`);
    assert.ok(ticks.length <= elapsedSeconds + 2, `${ticks.length} runs in ${elapsedSeconds} s`);
  }
  for (const engine of engines) assert.doesNotMatch(engine.output(), /scheduler pass failed/);
});
