import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { onPostgres, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer } from '../support/server.js';
import { connectedWorkers, startWorker, waitForConnections } from '../support/workers.js';

const postgresOnly = onPostgres() ? false : 'several replicas need PostgreSQL (PGlite is one process)';

describe('self-hosted workers with several server replicas', { skip: postgresOnly, timeout: 180_000 }, () => {
  test('a worker connected to one replica gets the runs created on another, each assigned once', async (t) => {
    const database = await createTestDatabase();
    const env = harnessEnv();
    const first = await startTestServer(env, { database });
    const second = await startTestServer(env, { database, role: 'api' });

    // Two connections of the worker, one on each replica.
    const onFirst = startWorker(first, 'box-replicas', { env, args: ['--max-concurrent-tasks', '2'] });
    // Keys live in the shared database: the first replica's worker key serves on both.
    const onSecond = startWorker(second, 'box-replicas', {
      env,
      args: ['--max-concurrent-tasks', '2'],
      apiKey: first.workerKey,
    });
    // Workers first, then the servers, then their database (hooks run in the order they were added).
    t.after(async () => {
      await Promise.all([stopChild(onFirst.child, 'SIGKILL'), stopChild(onSecond.child, 'SIGKILL')]);
      await Promise.all([first.stop(), second.stop()]);
      await database.drop();
    });
    await waitForConnections(first, 'box-replicas', 2).catch((error) => {
      throw new Error(
        `${error.message}\nworker on the first replica:\n${onFirst.output()}\nworker on the second:\n${onSecond.output()}`,
      );
    });
    assert.equal(
      (await connectedWorkers(second, first.apiKey)).find((worker) => worker.worker_host === 'box-replicas')
        ?.connection_count,
      2,
      'presence is shared',
    );

    const runIds = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createRun(
          i % 2 ? first : second,
          { prompt: script({ sleep: 50 * (i % 3) }, { say: `run ${i}` }), config: { worker_host: 'box-replicas' } },
          first.apiKey,
        ),
      ),
    );
    for (const runId of runIds)
      assert.equal((await waitForState(first, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    const events = await first.db
      .selectFrom('run_events')
      .select(['run_id', 'event_type', 'payload'])
      .where('run_id', 'in', runIds)
      .execute();
    for (const runId of runIds) {
      const own = events.filter((event) => event.run_id === runId);
      assert.equal(
        own.filter((event) => event.event_type === 'run_dispatched').length,
        1,
        `run ${runId} assigned once: ${JSON.stringify(own)}`,
      );
      assert.equal(own.filter((event) => event.event_type === 'agent_started').length, 1);
    }
  });
});
