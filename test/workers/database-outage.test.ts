/**
 * A PostgreSQL outage under a self-hosted worker, for real: the test's own cluster (test/support/private-postgres.ts)
 * is shut down or killed while a worker's task is running, the agent finishes while the database is down, and the
 * run must end as its agent said, with its whole transcript, once the database is back. The replica the worker is
 * connected to applies the worker's reports; it has to hold them until it can write them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, before, after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../../src/platform/crypto.js';
import { eventually, harnessEnv, textEvents } from '../support/engine.js';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { databaseEnv, onPostgres, stopChild } from '../support/processes.js';
import { spawnServer } from '../support/server.js';
import { startWorker } from '../support/workers.js';

const skip = !onPostgres()
  ? 'a database outage needs a database server (PGlite runs inside the process)'
  : privatePostgresUnavailable();

/** Waits for a `release` file in its workspace, then writes 20 lines, a progress note and an artifact, and ends. */
const OUTAGE_HARNESS = fileURLToPath(new URL('../platform/outage-harness.mjs', import.meta.url));

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
      const apiKey = generateApiKey();
      // The same harnesses for the server (which checks the run's harness) and the worker (which runs it).
      const harnesses = harnessEnv({ outage: { command: [process.execPath, OUTAGE_HARNESS] } });
      const server = await spawnServer({ ...databaseEnv(database), ...harnesses, HANGAR_BOOTSTRAP_API_KEY: apiKey });
      t.after(async () => {
        if (!cluster.running()) await cluster.start();
        await stopChild(server.child);
        await database.drop();
      });
      const api = (method: string, route: string, body?: unknown) =>
        fetch(`${server.url}/api/v1${route}`, {
          method,
          headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
          redirect: 'manual',
        });
      const getRun = async (runId: string) => (await (await api('GET', `/agent/runs/${runId}`)).json()) as any;
      const texts = async (runId: string) => {
        const link = await api('GET', `/agent/runs/${runId}/transcript`);
        if (link.status === 404) return []; // Nothing written yet.
        if (link.status !== 302) throw new Error(`transcript of ${runId}: ${link.status} ${await link.text()}`);
        return textEvents(await (await fetch(link.headers.get('location')!)).text());
      };
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

      const keyAnswer = await api('POST', '/selfhosted/worker-keys', { name: 'outage', worker_id: 'box-outage' });
      assert.equal(keyAnswer.status, 201, await keyAnswer.clone().text());
      const workerKey = ((await keyAnswer.json()) as { key: string }).key;
      const worker = startWorker({ url: server.url, workerKey }, 'box-outage', { env: harnesses });
      t.after(async () => {
        await stopChild(worker.child, 'SIGKILL');
        fs.rmSync(worker.dataDir, { recursive: true, force: true });
      });

      const created = await api('POST', '/agent/runs', {
        prompt: 'outage',
        config: { worker_host: 'box-outage', harness: { type: 'outage' } },
      });
      assert.equal(created.status, 200, await created.clone().text());
      const runId = ((await created.json()) as { run_id: string }).run_id;
      // The harness is running on the worker once its first line is in the transcript.
      await eventually('the harness to run on the worker', async () => {
        const run = await getRun(runId);
        assert.ok(['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'].includes(run.state), `unexpected ${run.state}`);
        return run.state === 'INPROGRESS' && (await texts(runId)).includes('waiting for the outage');
      });

      if (how === 'stop') await cluster.stop('fast');
      else await cluster.kill();
      // The agent finishes its work while the database is down...
      const seen = logged(/database unavailable: retrying a worker message|could not apply a worker message/);
      fs.writeFileSync(path.join(worker.dataDir, 'workspaces', `${runId}.1`, 'release'), '');
      // ...and the worker's reports have reached the server, which failed to write them, before the database comes
      // back (the log says so: it retries now; it refused them before).
      await seen;
      await cluster.start();

      let run: any;
      await eventually('the run to end', async () => {
        run = await getRun(runId);
        return ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'].includes(run.state);
      });
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      assert.equal(run.status_message?.message, 'finished while the database was down');
      const lines = Array.from({ length: 20 }, (_, index) => `line ${index + 1} written during the outage`);
      assert.deepEqual(await texts(runId), ['waiting for the outage', ...lines]);
      const timeline = (await (await api('GET', `/agent/runs/${runId}/timeline`)).json()) as {
        events: Array<{ event_type: string }>;
      };
      const types = timeline.events.map((event) => event.event_type);
      for (const type of ['agent_progress', 'oz_run_done'])
        assert.equal(types.filter((seenType) => seenType === type).length, 1, `${type} once in ${types.join(', ')}`);
    });
  }
});
