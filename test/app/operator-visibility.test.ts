import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { hangarCli } from '../support/cli.js';
import { harnessEnv, script } from '../support/engine.js';
import { databaseEnv, spawnKeyedServer, stopChild, waitForOutput } from '../support/processes.js';
import { createTestDatabase, spawnServer, startTestServer, type TestServer } from '../support/server.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

const run = promisify(execFile);

/** `hangar doctor` from the sources with `env` (the server's configuration) and nothing else of this process's. */
async function doctor(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [...HANGAR_FROM_SOURCES, 'doctor', ...args], {
      env: { PATH: process.env.PATH!, HANGAR_SANDBOX_READ_ONLY_PATHS: '', ...env },
    });
    return { code: 0, stdout };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string };
    return { code: failure.code ?? 1, stdout: failure.stdout ?? '' };
  }
}

// Issue 26: what an operator sees of a running instance.
describe('operator visibility', () => {
  let dataDir: string;
  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-doctor-'));
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('hangar doctor prints the summary and the checks; a failing check exits 1 and says what to set', async () => {
    const configured = await doctor([], {
      HANGAR_DATA_DIR: dataDir,
      HANGAR_CONFIG: path.resolve('examples/hangar.yaml'),
      HANGAR_GIT_BASE_URL: `file://${dataDir}`,
      HANGAR_SANDBOX: 'process',
    });
    assert.match(configured.stdout, /sandbox: {4}process \(HANGAR_SANDBOX=process\)/);
    assert.match(configured.stdout, /echo \(command: node .*examples\/echo-harness\.mjs\)/);
    assert.match(configured.stdout, /✓ harness echo: node found at /);
    assert.match(configured.stdout, /✓ workspace directory writable: /);
    assert.match(configured.stdout, /✓ git base URL reachable: /);
    // process mode does not isolate runs: that is a failed check, with the fix.
    assert.match(configured.stdout, /✗ sandbox: .*NOT isolated/);
    assert.equal(configured.code, 1);

    const bare = await doctor(['--json'], {
      HANGAR_DATA_DIR: dataDir,
      HANGAR_GIT_BASE_URL: `file://${dataDir}/nowhere`,
    });
    const status = JSON.parse(bare.stdout);
    assert.equal(bare.code, 1);
    assert.equal(status.summary.config_file, null);
    assert.deepEqual(status.summary.models, []);
    assert.match(status.summary.database, /^PGlite/);
    const byName = Object.fromEntries(status.checks.map((check: any) => [check.name, check]));
    assert.equal(byName['runs can execute'].ok, false);
    assert.match(byName['runs can execute'].detail, /ANTHROPIC_API_KEY.*HANGAR_CONFIG=examples\/hangar\.yaml/);
    assert.equal(byName['git base URL reachable'].ok, false);
    assert.match(byName['git base URL reachable'].detail, /HANGAR_GIT_BASE_URL/);
  });

  describe('GET /admin/status', () => {
    let hangar: TestServer;
    before(async () => {
      hangar = await startTestServer(harnessEnv({}, { HANGAR_GIT_BASE_URL: `file://${os.tmpdir()}` }));
    });
    after(() => hangar.stop());

    test('instance administrators get the summary and checks; others get 403', async () => {
      const status = await hangar.request('GET', '/api/v1/admin/status');
      assert.equal(status.status, 200, JSON.stringify(status.body));
      assert.equal(status.body.summary.default_harness, 'script');
      assert.equal(status.body.summary.dashboard_url, hangar.url);
      assert.ok(status.body.summary.harnesses.some((line: string) => line.startsWith('script (command: ')));
      for (const name of ['sandbox', 'runs can execute', 'workspace directory writable', 'git base URL reachable'])
        assert.ok(
          status.body.checks.some((check: any) => check.name === name),
          `${name} in ${JSON.stringify(status.body.checks)}`,
        );
      const member = await hangar.addUser(hangar.teamUid, 'admin');
      const refused = await hangar.request('GET', '/api/v1/admin/status', { apiKey: member.apiKey });
      assert.equal(refused.status, 403);
      const remote = await hangarCli(['doctor', '--remote', '--json'], { url: hangar.url, apiKey: hangar.apiKey });
      assert.deepEqual(JSON.parse(remote.stdout).summary, status.body.summary);
    });

    test('--follow shows why a run failed, with the command output', async () => {
      const crash = [
        "Error: Cannot find module '/nowhere/harness.mjs'",
        '    at resolve (x.js:1:1)',
        'Node.js v20.20.2',
      ];
      const cli = await hangarCli(['run', script({ stderr: crash.join('\n') }, { exit: 1 }), '--follow'], {
        url: hangar.url,
        apiKey: hangar.apiKey,
      });
      assert.equal(cli.code, 1);
      assert.match(
        cli.stdout,
        /\nFAILED: The harness script exited with code 1: Error: Cannot find module '\/nowhere\/harness\.mjs'\n/,
      );
      assert.match(
        cli.stdout,
        /output of harness script:\n {2}\| Error: Cannot find module.*\n {2}\| {5}at resolve.*\n {2}\| Node\.js v20\.20\.2\n/,
      );
    });
  });

  test('--follow on a server that can run nothing says why the run waits', async () => {
    const hangar = await startTestServer();
    try {
      const child = spawn(process.execPath, [...HANGAR_FROM_SOURCES, 'run', 'hi', '--follow'], {
        env: { ...process.env, HANGAR_URL: hangar.url, HANGAR_API_KEY: hangar.apiKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // Once the follower says why it waits, the run is cancelled, which ends the follow.
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk) => {
          stdout += chunk;
          if (stdout.includes('waiting: ')) resolve();
        });
        child.once('exit', () => reject(new Error(`the CLI exited before saying why: ${stdout}`)));
      });
      const runId = /^run (\S+) QUEUED$/m.exec(stdout)?.[1];
      assert.ok(runId, stdout);
      assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 200);
      assert.equal(await exited, 1);
      assert.match(stdout, /\nwaiting: No harness can run it: .*ANTHROPIC_API_KEY.*\n/);
      assert.match(stdout, /\nCANCELLED/);
    } finally {
      await hangar.stop();
    }
  });

  test('the start prints one summary, a run end is one line at info, health probes are not logged', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const json = await spawnKeyedServer(database, {
      ...harnessEnv(),
      HANGAR_LOG_LEVEL: 'info',
      HANGAR_LOG_FORMAT: 'json',
    });
    try {
      await fetch(`${json.url}/healthz`);
      const created = await json.hangar.request('POST', '/agent/runs', { body: { prompt: script({ exit: 3 }) } });
      const runId = created.body.run_id as string;
      // The run end is logged.
      await waitForOutput(json, `run ${runId} ended`);
      const end = json
        .output()
        .split('\n')
        .find((line) => line.includes(`run ${runId} ended`));
      assert.deepEqual(
        (({ runId: id, state, duration_ms }) => ({ id, state, timed: typeof duration_ms === 'number' }))(
          JSON.parse(end!),
        ),
        { id: runId, state: 'FAILED', timed: true },
      );
      assert.equal(JSON.parse(end!).level, 30);
      const lines = json
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
      const serving = lines.find((line) => line.msg === 'Hangar is serving');
      assert.ok(serving, json.output());
      assert.equal(serving.data_dir, database.dataDir);
      assert.ok(serving.sandbox && serving.reason && serving.dashboard_url, JSON.stringify(serving));
      assert.ok(Array.isArray(serving.harnesses));
      assert.deepEqual(
        lines.filter((line) => /healthz|readyz/.test(JSON.stringify(line.req ?? line.url ?? ''))),
        [],
        'no request line of a probe',
      );
    } finally {
      await stopChild(json.child);
    }
    const pretty = await spawnServer({
      ...databaseEnv(database),
      HANGAR_LOG_LEVEL: 'info',
      HANGAR_LOG_FORMAT: 'pretty',
    });
    try {
      assert.match(
        pretty.output(),
        /Hangar .* is serving \(role all\)\n {2}dashboard: {2}http:\/\/127\.0\.0\.1:\d+\n {2}sandbox: /,
      );
      assert.doesNotMatch(pretty.output(), /^\{/m, 'no JSON line on a terminal format');
    } finally {
      await stopChild(pretty.child);
    }
  });
});
