// Issue 48 items 4.3 and 4.9: `hangar doctor` as a newcomer runs it in a second shell (HANGAR_URL and
// HANGAR_API_KEY, none of the server's settings) checks the server that answers there, says which it checked, and
// shows a passing check with something to look at as a warning, not a ✓.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { harnessEnv } from '../support/engine.js';
import { freePort, startTestServer, type TestServer } from '../support/server.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

const run = promisify(execFile);

/** `hangar doctor` as a second shell runs it: HANGAR_URL and HANGAR_API_KEY, none of the server's settings. */
async function doctor(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [...HANGAR_FROM_SOURCES, 'doctor', ...args], {
      env: {
        PATH: process.env.PATH!,
        HANGAR_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-shell-')),
        ...env,
      },
    });
    return { code: 0, stdout };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string };
    return { code: failure.code ?? 1, stdout: failure.stdout ?? '' };
  }
}

describe('hangar doctor in a second shell', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv({}, { HANGAR_GIT_BASE_URL: `file://${os.tmpdir()}` }));
  });
  after(() => hangar.stop());

  test('checks the server that answers at HANGAR_URL, not this shell, and says which it checked', async () => {
    const status = (await hangar.request('GET', '/api/v1/admin/status')).body;
    const checked = await doctor([], { HANGAR_URL: hangar.url, HANGAR_API_KEY: hangar.apiKey });
    assert.ok(checked.stdout.startsWith(`Hangar at ${hangar.url} (the server's own checks`), checked.stdout);
    // This shell has no HANGAR_CONFIG and no model key; the server runs its harness.
    assert.match(checked.stdout, /✓ runs can execute: harness for runs that name none: script/);
    assert.equal(checked.code, status.checks.every((check: any) => check.ok) ? 0 : 1, checked.stdout);
    const json = JSON.parse(
      (await doctor(['--json'], { HANGAR_URL: hangar.url, HANGAR_API_KEY: hangar.apiKey })).stdout,
    );
    assert.equal(json.checked, 'server');
    assert.deepEqual(json.summary, status.summary);
  });

  test("with no server, or one that refuses the key, the checks are this shell's and labelled so", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const alone = await doctor([], { HANGAR_URL: nowhere });
    assert.ok(alone.stdout.startsWith(`No Hangar answers at ${nowhere} (HANGAR_URL)`), alone.stdout);
    assert.match(alone.stdout, /\nThis shell's settings \(/);
    assert.match(alone.stdout, /\nChecks of this shell's settings:\n/);
    assert.match(alone.stdout, /✗ runs can execute: /);
    assert.equal(alone.code, 1);

    const refused = await doctor([], { HANGAR_URL: hangar.url, HANGAR_API_KEY: 'hgr_not-a-key' });
    assert.ok(refused.stdout.startsWith(`A Hangar answers at ${hangar.url}, but set HANGAR_API_KEY`), refused.stdout);
    assert.match(refused.stdout, /\nChecks of this shell's settings:\n/);
    const local = await doctor(['--local', '--json'], { HANGAR_URL: hangar.url, HANGAR_API_KEY: hangar.apiKey });
    assert.equal(JSON.parse(local.stdout).checked, 'this shell');
  });

  test('a passing check with something to look at is a warning (!), not a ✓: no model has a key', async () => {
    const checked = await doctor(['--remote'], { HANGAR_URL: hangar.url, HANGAR_API_KEY: hangar.apiKey });
    assert.match(checked.stdout, /\n {2}! model keys: no model has a key/);
    assert.doesNotMatch(checked.stdout, /✓ model keys/);
  });
});
