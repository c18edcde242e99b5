/**
 * A PostgreSQL outage under a self-hosted worker, for real: the test's own cluster (test/support/private-postgres.ts)
 * is shut down or killed while a worker's task is running, the agent finishes while the database is down, and the
 * run must end as its agent said, with its whole transcript, once the database is back. The replica the worker is
 * connected to applies the worker's reports; it has to hold them until it can write them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { harnessEnv } from '../support/engine.js';
import { assertNothingLost, OUTAGE_HARNESS, outageApi, outageHarnessWaiting } from '../support/outage-run.js';
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from '../support/private-postgres.js';
import { onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { startWorker } from '../support/workers.js';

const skip = !onPostgres()
  ? 'a database outage needs a database server (PGlite runs inside the process)'
  : privatePostgresUnavailable();

describe('a self-hosted worker whose task ends while PostgreSQL is down', { skip }, () => {
  let cluster: PrivatePostgres;
  before(async () => {
    cluster = await startPrivatePostgres();
  });
  after(() => cluster.destroy());

  for (const how of ['stop', 'kill'] as const) {
    // The timeout only stops a hung test; nothing here measures time.
    test(`the run records its transcript and its end once the database is back (${how})`, {
      timeout: 120_000,
    }, async (t) => {
      const database = await cluster.createDatabase();
      // The same harnesses for the server (which checks the run's harness) and the worker (which runs it).
      const harnesses = harnessEnv({ outage: { command: [process.execPath, OUTAGE_HARNESS] } });
      const server = await spawnKeyedServer(database, harnesses);
      t.after(async () => {
        try {
          if (!cluster.running()) await cluster.start();
        } finally {
          await stopChild(server.child);
          await database.drop();
        }
      });
      const api = outageApi(server);
      /** Resolves once the server's log has a line matching `pattern`. */
      const logged = (pattern: RegExp) =>
        new Promise<void>((resolve) => {
          const check = () => {
            if (!pattern.test(server.output())) return;
            server.child.stdout!.off('data', check);
            resolve();
          };
          server.child.stdout!.on('data', check);
        });

      const keyAnswer = await api.request('POST', '/selfhosted/worker-keys', {
        name: 'outage',
        worker_id: 'box-outage',
      });
      assert.equal(keyAnswer.status, 201, await keyAnswer.clone().text());
      const workerKey = ((await keyAnswer.json()) as { key: string }).key;
      const worker = startWorker({ url: server.url, workerKey }, 'box-outage', { env: harnesses });
      t.after(async () => {
        await stopChild(worker.child, 'SIGKILL');
        fs.rmSync(worker.dataDir, { recursive: true, force: true });
      });

      const created = await api.request('POST', '/agent/runs', {
        prompt: 'outage',
        config: { worker_host: 'box-outage', harness: { type: 'outage' } },
      });
      assert.equal(created.status, 200, await created.clone().text());
      const runId = ((await created.json()) as { run_id: string }).run_id;
      await outageHarnessWaiting(api, runId);

      if (how === 'stop') await cluster.stop('fast');
      else await cluster.kill();
      // The agent finishes its work while the database is down...
      const seen = logged(/database unavailable: retrying a worker message|could not apply a worker message/);
      // ...its artifact included, which the worker posts over HTTP and the server answers 503 for (issue 48, item
      // 5.4: the worker retries it now; it dropped it before).
      const artifactRefused = new Promise<void>((resolve) => {
        const streams = [worker.child.stdout!, worker.child.stderr!];
        const check = () => {
          if (!/retrying the artifact|could not record an artifact/.test(worker.output())) return;
          for (const stream of streams) stream.off('data', check);
          resolve();
        };
        for (const stream of streams) stream.on('data', check);
        check();
      });
      fs.writeFileSync(path.join(worker.dataDir, 'workspaces', `${runId}.1`, 'release'), '');
      // ...and the worker's reports have reached the server, which failed to write them, before the database comes
      // back (the logs say so: the server retries its messages, the worker its artifact; before, they gave up).
      await Promise.all([seen, artifactRefused]);
      await cluster.start();

      const run = await assertNothingLost(api, runId, ['agent_progress', 'oz_run_done']);
      assert.deepEqual(
        run.artifacts.map((artifact: { artifact_type: string; data: { url: string } }) => [
          artifact.artifact_type,
          artifact.data.url,
        ]),
        [['PULL_REQUEST', 'https://example.invalid/pr/23']],
      );
    });
  }
});
