// Issue 48 item 4: what a newcomer hit following the README, each case through the real `hangar` CLI against a
// real server: why a run waits on `runs get` and `run`, a replay in the order things happened, and the
// dashboard's words for timeline events.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

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
    assert.ok(shown.stdout.includes(`\nWaiting:      ${reason.message}\n`), shown.stdout);
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
