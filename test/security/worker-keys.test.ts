import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { harnessEnv, outputTexts, script, waitForState } from '../support/engine.js';
import { stopChild, waitForExit } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  ProtocolClient,
  refusedUpgrade,
  startWorker,
  type WorkerProcess,
  waitForConnections,
} from '../support/workers.js';

/** Issue 21, item 5: only a worker key made for a worker ID connects as that worker and receives its runs. */
describe('security: worker keys on the worker websocket', () => {
  let hangar: TestServer;
  const workers: WorkerProcess[] = [];
  const status = { running: [], max_concurrent_tasks: 1, accepting: true };

  /** A worker key made the way a team admin makes one: through the CLI. */
  const createKey = async (workerId: string, apiKey = hangar.apiKey) => {
    const created = await hangarCli(
      ['workers', 'keys', 'create', '--worker-id', workerId, '--name', `key for ${workerId}`, '--json'],
      { url: hangar.url, apiKey },
    );
    assert.equal(created.code, 0, created.stderr);
    return JSON.parse(created.stdout) as { uid: string; key: string; worker_id: string };
  };

  before(async () => {
    // Heartbeats every second: a revocation reaches open connections within a second.
    hangar = await startTestServer(harnessEnv({}, { HANGAR_WORKER_HEARTBEAT_SECONDS: '1' }));
  });
  after(async () => {
    for (const started of workers)
      if (started.child.exitCode === null && started.child.signalCode === null)
        await stopChild(started.child, 'SIGKILL');
    await hangar.stop();
  });

  test("a member's API key (admin, plain member or agent identity) is refused with 403 and gets none of the worker's runs", async () => {
    const runId = await createRun(hangar, {
      prompt: script({ say: 'for the real worker only' }),
      config: { worker_host: 'box-victim' },
    });
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const agent = await hangar.request('POST', '/agent/identities', { body: { name: 'Impersonator' } });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const agentKey = await hangar.request('POST', '/api/v1/admin/api-keys', {
      body: { name: 'agent key', agent_uid: agent.body.uid },
    });
    assert.equal(agentKey.status, 201, JSON.stringify(agentKey.body));
    for (const [who, key] of [
      ['team admin', hangar.apiKey],
      ['member', member.apiKey],
      ['agent identity', agentKey.body.key],
    ] as const) {
      const refused = await refusedUpgrade(hangar, 'box-victim', key);
      assert.equal(refused.status, 403, `${who}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error_code, 'not_authorized');
      assert.match(refused.body.detail, /needs a worker key/);
      assert.match(
        refused.body.detail,
        /hangar workers keys create --worker-id/,
        'the refusal says how to get a worker key',
      );
      assert.ok(refused.closed);
    }
    const run = await hangar.db.selectFrom('runs').select('state').where('id', '=', runId).executeTakeFirstOrThrow();
    assert.equal(run.state, 'QUEUED', 'nobody took the run');
  });

  test('only team admins create and revoke worker keys; members may list them, never the keys', async () => {
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const byMember = await hangar.request('POST', '/api/v1/selfhosted/worker-keys', {
      body: { name: 'mine', worker_id: 'box-victim' },
      apiKey: member.apiKey,
    });
    assert.equal(byMember.status, 403);
    const created = await createKey('build-*');
    assert.match(created.key, /^hgw_/);
    assert.equal(
      (await hangar.request('DELETE', `/api/v1/selfhosted/worker-keys/${created.uid}`, { apiKey: member.apiKey }))
        .status,
      403,
    );
    const listed = await hangar.request('GET', '/api/v1/selfhosted/worker-keys', { apiKey: member.apiKey });
    assert.equal(listed.status, 200);
    const entry = listed.body.worker_keys.find((key: { uid: string }) => key.uid === created.uid);
    assert.equal(entry.worker_id, 'build-*');
    assert.equal(entry.key, undefined);
    assert.equal(
      (
        await hangar.request('POST', '/api/v1/selfhosted/worker-keys', {
          body: { name: 'reserved', worker_id: 'warp*' },
        })
      ).status,
      400,
    );
  });

  test('a worker key bound to one worker ID cannot connect as another, nor use the rest of the API', async () => {
    const { key } = await createKey('box-a');
    const asB = await refusedUpgrade(hangar, 'box-b', key);
    assert.equal(asB.status, 403);
    assert.match(asB.body.detail, /for worker ID "box-a", not "box-b"/);
    const pattern = await createKey('build-*');
    assert.equal((await refusedUpgrade(hangar, 'deploy-1', pattern.key)).status, 403, 'a pattern binds too');
    for (const path of ['/agent/runs', '/agent/connected-self-hosted-workers', '/api/v1/selfhosted/worker-keys']) {
      const response = await hangar.request('GET', path, { apiKey: key });
      assert.equal(response.status, 401, `${path}: ${JSON.stringify(response.body)}`);
      assert.match(response.body.detail, /worker key opens only the worker websocket/);
    }
    const other = await hangar.createTeamWithUser();
    const elsewhere = await createRun(
      hangar,
      { prompt: script({ say: 'x' }), config: { worker_host: 'box-a' } },
      other.apiKey,
    );
    const own = await createRun(hangar, { prompt: script({ say: 'y' }), config: { worker_host: 'box-a' } });
    const client = await ProtocolClient.connect(hangar, 'box-a', key);
    client.send('worker_status', { ...status, max_concurrent_tasks: 5 });
    const offered = await client.next((message) => message.type === 'task_assignment');
    await client.close();
    assert.equal(
      offered.data.task_id,
      own,
      "the team's own run is offered; another team's run for a worker of the same name never is",
    );
    assert.equal(
      (await hangar.db.selectFrom('runs').select('state').where('id', '=', elsewhere).executeTakeFirstOrThrow()).state,
      'QUEUED',
    );
  });

  test('a worker key works for its IDs and runs execute; revoking it closes the connection and refuses the reconnect', async () => {
    const { uid, key } = await createKey('build-*');
    const worker = startWorker(hangar, 'build-7', { env: harnessEnv(), apiKey: key });
    workers.push(worker);
    await waitForConnections(hangar, 'build-7', 1);
    const runId = await createRun(hangar, { prompt: script({ say: 'built' }), config: { worker_host: 'build-7' } });
    const done = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done.status_message));
    assert.deepEqual(await outputTexts(hangar, runId), ['built']);

    const revoked = await hangarCli(['workers', 'keys', 'revoke', uid], { url: hangar.url, apiKey: hangar.apiKey });
    assert.equal(revoked.code, 0, revoked.stderr);
    const exit = await waitForExit(worker.child);
    assert.equal(exit.code, 3, worker.output());
    assert.match(worker.output(), /refused this worker \(HTTP 401\)/);
    const again = await refusedUpgrade(hangar, 'build-7', key);
    assert.equal(again.status, 401);
    const listed = await hangar.request('GET', '/api/v1/selfhosted/worker-keys');
    assert.ok(listed.body.worker_keys.find((entry: { uid: string }) => entry.uid === uid).revoked_at);
  });

  test('a revocation made through another connection path reaches open connections at the next heartbeat', async () => {
    const { uid, key } = await createKey('box-heartbeat');
    const client = await ProtocolClient.connect(hangar, 'box-heartbeat', key);
    const closed = new Promise<number>((resolve) => client.socket.once('close', (code) => resolve(code)));
    // As another replica would: the row changes, this replica's hub is not told.
    await hangar.db.updateTable('worker_keys').set({ revoked_at: new Date() }).where('uid', '=', uid).execute();
    assert.equal(await closed, 4003);
  });
});
