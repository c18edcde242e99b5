import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

const cli = (args: string[], input?: string, apiKey = hangar.apiKey) =>
  hangarCli(['secrets', ...args], { url: hangar.url, apiKey }, input);
const readValue = (name: string) => hangar.server.services.secrets.readSecretValue(hangar.teamUid, name);

describe('hangar secrets', () => {
  test('set creates, then replaces; list shows names only; delete removes', async () => {
    const created = await cli(['set', 'DEPLOY_KEY', '--value', 'first-value', '--json']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).name, 'DEPLOY_KEY');
    assert.equal(created.stdout.includes('first-value'), false);
    assert.equal(await readValue('DEPLOY_KEY'), 'first-value');

    const replaced = await cli(['set', 'DEPLOY_KEY', '--value', 'second-value', '--json']);
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(JSON.parse(replaced.stdout).created_at, JSON.parse(created.stdout).created_at);
    assert.equal(await readValue('DEPLOY_KEY'), 'second-value');

    const list = await cli(['list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^DEPLOY_KEY\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\s+\d{4}-/m);
    assert.equal(list.stdout.includes('second-value'), false);
    const json = await cli(['list', '--json']);
    assert.deepEqual(
      JSON.parse(json.stdout).secrets.map((item: { name: string }) => item.name),
      ['DEPLOY_KEY'],
    );

    const deleted = await cli(['delete', 'DEPLOY_KEY']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /Deleted secret DEPLOY_KEY/);
    assert.equal(await readValue('DEPLOY_KEY'), null);
    const again = await cli(['delete', 'DEPLOY_KEY']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /HTTP 404/);
  });

  test('set reads a file byte for byte, or standard input without its final newline', async (t) => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-secret-cli-'));
    t.after(() => fs.rmSync(directory, { recursive: true, force: true }));
    const file = path.join(directory, 'key.pem');
    fs.writeFileSync(file, '-----BEGIN KEY-----\nabc\n-----END KEY-----\n');
    const fromFile = await cli(['set', 'PEM', '--from-file', file]);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.equal(await readValue('PEM'), '-----BEGIN KEY-----\nabc\n-----END KEY-----\n');

    const fromStdin = await cli(['set', 'PIPED'], 'token-from-stdin\n');
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.equal(await readValue('PIPED'), 'token-from-stdin');
  });

  test('refuses an empty value, two sources, a bad name, and a member key', async () => {
    const empty = await cli(['set', 'EMPTY'], '');
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /empty/);
    const both = await cli(['set', 'BOTH', '--value', 'a', '--from-file', '/dev/null']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /not both/);
    const badName = await cli(['set', '1bad', '--value', 'a']);
    assert.equal(badName.code, 1);
    assert.match(badName.stderr, /HTTP 400/);
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const denied = await cli(['set', 'BY_MEMBER', '--value', 'a'], undefined, member.apiKey);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /HTTP 403/);
    assert.equal(await readValue('BY_MEMBER'), null);
  });
});
