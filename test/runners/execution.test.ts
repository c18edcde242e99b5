import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newUid } from '../../src/platform/crypto.js';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 52, field 3, the execution side: a run executes with the runner it recorded at creation, and a runner that
// names a sandbox kind other than the one executing the run fails the run in words rather than running it in a
// sandbox its owner did not choose (the operator changed HANGAR_SANDBOX since; a worker of another kind took it).
let hangar: TestServer;

before(async () => {
  hangar = await startTestServer(harnessEnv({}, { HANGAR_SANDBOX: 'process' }));
});
after(() => hangar.stop());

async function runnerRow(shape: Record<string, unknown>): Promise<string> {
  // Written as the API would have accepted it on a server of that kind: this one runs process sandboxes only.
  const uid = newUid();
  await hangar.db
    .insertInto('runners')
    .values({ uid, team_uid: hangar.teamUid, name: `kind-${uid.slice(0, 6)}`, shape: JSON.stringify(shape) })
    .execute();
  return uid;
}

test('a runner of another sandbox kind fails its run with the reason; one of this kind runs', async () => {
  const elsewhere = await runnerRow({ sandbox: 'container', limits: { cpus: 1 } });
  const created = await hangar.request('POST', '/agent/runs', {
    body: { prompt: script({ say: 'never' }), config: { runner_id: elsewhere } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const failed = await waitForState(hangar, created.body.run_id, 'FAILED', 'ERROR', 'SUCCEEDED');
  assert.equal(failed.state, 'FAILED', JSON.stringify(failed.status_message));
  assert.match(
    failed.status_message.message,
    /names the container sandbox, but it executes where the sandbox is process/,
  );

  const here = await runnerRow({ sandbox: 'process' });
  const fine = await hangar.request('POST', '/agent/runs', {
    body: { prompt: script({ say: 'ran' }), config: { runner_id: here } },
  });
  const done = await waitForState(hangar, fine.body.run_id, 'FAILED', 'ERROR', 'SUCCEEDED');
  assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done.status_message));
  assert.equal(done.agent_config.runner_id, here);
});
