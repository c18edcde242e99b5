/**
 * The CLI where a person looks for the run config's newer fields: `hangar run --share/--credential-strategy/
 * --computer-use-model`, the link printed once, `hangar runs get` showing them, and `hangar runs share|sharing|
 * unshare` over a real server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
const cli = (...args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });

async function ok(...args: string[]): Promise<string> {
  const result = await cli(...args);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
});
after(() => hangar.stop());

test('hangar run takes the three options, prints the link once, and runs get shows them', async () => {
  const created = await ok(
    'run',
    'share me',
    '--share',
    'editor',
    '--credential-strategy',
    'creator',
    '--computer-use-model',
    'cu-model',
  );
  const runId = /Created run (\S+) /.exec(created)?.[1];
  assert.ok(runId, created);
  assert.match(created, new RegExp(`${hangar.url.replace(/[.]/g, '\\.')}/shared/run#hgs_[A-Za-z0-9]{40}`));
  assert.match(created, /may read it and send follow-ups/);

  const shown = await ok('runs', 'get', runId);
  assert.match(shown, /GitHub as:\s+CREATOR/);
  assert.match(shown, /Computer use model:\s+cu-model/);
  assert.match(shown, /Shared:\s+editor link since/);
  assert.doesNotMatch(shown, /hgs_/);

  const refused = await cli('run', 'x', '--share', 'owner');
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /--share takes one of VIEWER, EDITOR/);
});

test('hangar runs share, sharing and unshare', async () => {
  const runId = /Created run (\S+) /.exec(await ok('run', 'later'))![1]!;
  assert.notEqual((await cli('runs', 'sharing', runId)).code, 0, 'no link yet');
  const shared = await ok('runs', 'share', runId);
  assert.match(shared, /\/shared\/run#hgs_/);
  assert.match(shared, /may read it \(/);
  assert.match(await ok('runs', 'sharing', runId), /\(VIEWER\)/);
  assert.match(await ok('runs', 'share', runId, '--access', 'editor'), /send follow-ups/);
  assert.match(await ok('runs', 'unshare', runId), /Revoked/);
  assert.notEqual((await cli('runs', 'sharing', runId)).code, 0);
});
