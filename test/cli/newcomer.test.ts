// Issue 48 item 4: what a newcomer hit following the README, each case through the real `hangar` CLI against a
// real server: why a run waits on `runs get` and `run`, a replay in the order things happened, and the
// dashboard's words for timeline events, what `--follow` shows while a run waits.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { hangarCli } from '../support/cli.js';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

const run = promisify(execFile);

describe('a server that can run nothing says why its runs wait', () => {
  let hangar: TestServer;
  before(async () => {
    // API only: no engine, so every run waits with a queue_reason.
    hangar = await startTestServer({}, { role: 'api' });
  });
  after(() => hangar.stop());
  const cli = (...args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });

  test('hangar run (without --follow) and hangar runs get print the queue_reason', async () => {
    const created = await cli('run', 'Fix the flaky login test');
    assert.equal(created.code, 0, created.stderr);
    const runId = /^Created run (\S+) \(QUEUED\)\.$/m.exec(created.stdout)?.[1];
    assert.ok(runId, created.stdout);
    const reason = (await hangar.request('GET', `/agent/runs/${runId}`)).body.queue_reason;
    assert.ok(reason?.message, 'the API gives a reason');
    assert.ok(created.stdout.includes(`\nwaiting: ${reason.message}\n`), created.stdout);

    const shown = await cli('runs', 'get', runId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^State: +QUEUED$/m);
    assert.equal(/^Waiting: +(.*)$/m.exec(shown.stdout)?.[1], reason.message, shown.stdout);
  });
});

describe('a run that already ended', () => {
  let hangar: TestServer;
  let runId: string;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
    runId = await createRun(hangar, { prompt: script({ say: 'first words' }, { say: 'last words' }, { done: 'ok' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');
  });
  after(() => hangar.stop());
  const cli = (...args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });

  test('runs events replays it in the order things happened: the output between the start and the end', async () => {
    const events = await cli('runs', 'events', runId);
    assert.equal(events.code, 0, events.stderr);
    const lines = events.stdout.trimEnd().split('\n');
    const at = (line: string) => {
      const index = lines.indexOf(line);
      assert.notEqual(index, -1, `${line} in ${events.stdout}`);
      return index;
    };
    assert.ok(at('[Agent started]') < at('assistant: first words'), events.stdout);
    assert.ok(at('assistant: first words') < at('assistant: last words'), events.stdout);
    assert.ok(at('assistant: last words') < at('[Finished]'), events.stdout);
    assert.equal(lines.at(-1), 'SUCCEEDED: ok');
  });

  test("the CLI says timeline events in the dashboard's words, never their raw names", async () => {
    const events = await cli('runs', 'events', runId);
    const timeline = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events as {
      event_type: string;
    }[];
    assert.ok(timeline.some((event) => event.event_type === 'vm_shutdown'));
    for (const { event_type } of timeline) assert.ok(!events.stdout.includes(`[${event_type}]`), events.stdout);
    const table = await cli('runs', 'timeline', runId);
    assert.match(table.stdout, /Environment shut down/);
    assert.doesNotMatch(table.stdout, /vm_shutdown/);
  });
});

describe('following a run that nothing can execute', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer({}, { role: 'api' });
  });
  after(() => hangar.stop());

  test('off a terminal, a line now and then says how long it has waited and why; --timeout stops following', async () => {
    const followed = await hangarCli(['run', 'hi', '--follow', '--timeout', '7s'], {
      url: hangar.url,
      apiKey: hangar.apiKey,
    });
    assert.equal(followed.code, 1, followed.stderr);
    const runId = /^run (\S+) QUEUED$/m.exec(followed.stdout)?.[1];
    assert.ok(runId, followed.stdout);
    const reason = (await hangar.request('GET', `/agent/runs/${runId}`)).body.queue_reason.message as string;
    assert.ok(followed.stdout.includes(`\nstill waiting after 5 s: ${reason}\n`), followed.stdout);
    assert.ok(
      followed.stdout.includes(`\nStopped following after 7 s (--timeout): the run is QUEUED and goes on (${reason}).`),
      followed.stdout,
    );
    assert.equal((await hangar.request('GET', `/agent/runs/${runId}`)).body.state, 'QUEUED');
  });

  test('on a terminal, a live line counts the time waited with the reason', async () => {
    // script(1) gives the CLI a terminal of its own.
    const line = [process.execPath, ...HANGAR_FROM_SOURCES, 'run', 'hi', '--follow', '--timeout', '3s']
      .map((arg) => `'${arg.replace(/'/g, "'\\''")}'`)
      .join(' ');
    const { stdout } = await run('script', ['-qec', line, '/dev/null'], {
      env: { ...process.env, HANGAR_URL: hangar.url, HANGAR_API_KEY: hangar.apiKey },
    }).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    const runId = /run (\S+) QUEUED/.exec(stdout)?.[1];
    assert.ok(runId, stdout);
    const reason = (await hangar.request('GET', `/agent/runs/${runId}`)).body.queue_reason.message as string;
    // Drawn at once, then again each second over itself (carriage return, erase the line).
    assert.ok(stdout.includes(`\r\u001b[Kwaiting 0 s: ${reason}`), JSON.stringify(stdout));
    assert.ok(stdout.includes(`\r\u001b[Kwaiting 1 s: ${reason}`), JSON.stringify(stdout));
    assert.match(stdout, /Stopped following after 3 s \(--timeout\)/);
  });
});

describe('hangar serve on a busy port', () => {
  test('a free port is held from the start without holding up a probe: the server becomes ready', async (t) => {
    // spawnServer asks /readyz every 100 ms from the start: those connections reach the port's holder first.
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const served = await spawnKeyedServer(database);
    t.after(() => stopChild(served.child));
    assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
  });

  test('says so at once, naming PORT, before it creates a database', async (t) => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    t.after(() => busy.close());
    const port = (busy.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-busy-port-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const started = await run(process.execPath, [...HANGAR_FROM_SOURCES, 'serve'], {
      env: {
        PATH: process.env.PATH!,
        HOST: '127.0.0.1',
        PORT: String(port),
        HANGAR_DATA_DIR: dataDir,
        HANGAR_CONFIG: path.resolve('examples/hangar.yaml'),
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(started.code, 1, started.stderr);
    assert.match(
      started.stderr,
      new RegExp(
        `port ${port} on 127\\.0\\.0\\.1 is in use \\(EADDRINUSE\\).*start this one on another port with PORT`,
      ),
    );
    // The port was looked at first: the embedded database (half a minute on a first start) was never created.
    assert.equal(fs.existsSync(path.join(dataDir, 'pglite')), false, fs.readdirSync(dataDir).join(', '));
  });
});
