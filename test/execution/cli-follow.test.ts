import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eventLabel } from '../../src/runs/event-words.js';
import { hangarCli } from '../support/cli.js';
import { getRun, harnessEnv, script, timelineTypes, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A proxy to `target` that cuts the first event stream right after its first event, as a dropped connection
 * would. Records the Last-Event-ID of every event-stream request.
 */
async function flakyProxy(target: string): Promise<{
  url: string;
  lastEventIds: Array<string | undefined>;
  firstEventId: () => string | undefined;
  close(): Promise<void>;
}> {
  const lastEventIds: Array<string | undefined> = [];
  let firstEventId: string | undefined;
  const server = http.createServer((request, response) => {
    const stream = request.url!.endsWith('/events');
    if (stream) lastEventIds.push(request.headers['last-event-id'] as string | undefined);
    const cut = stream && lastEventIds.length === 1;
    const upstream = http.request(
      `${target}${request.url}`,
      { method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        if (!cut) return void answer.pipe(response);
        let seen = '';
        const forward = (chunk: Buffer) => {
          seen += chunk.toString();
          const event = /(^|\n)id: (\S+)\nevent: [^\n]+\ndata: [^\n]*\n\n/.exec(seen);
          if (!event) return;
          firstEventId = event[2];
          answer.off('data', forward);
          answer.destroy();
          // Whatever came after the first event is lost with the connection.
          response.write(seen.slice(0, event.index + event[0].length), () => response.socket?.destroy());
        };
        answer.on('data', forward);
      },
    );
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastEventIds,
    firstEventId: () => firstEventId,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const count = (lines: string[], line: string) => lines.filter((candidate) => candidate === line).length;

describe('hangar run --follow and hangar runs followup, events, conversation, transcript', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  const cli = (args: string[], url = hangar.url) => hangarCli(args, { url, apiKey: hangar.apiKey });

  test('run --follow prints the events once each, resumes a dropped stream, and exits 0 on success', async () => {
    const proxy = await flakyProxy(hangar.url);
    try {
      const result = await cli(
        ['run', script({ say: 'hello' }, { tool: 'ls' }, { done: 'all good' }), '--follow'],
        proxy.url,
      );
      assert.equal(result.code, 0, result.stderr + result.stdout);
      const lines = result.stdout.trimEnd().split('\n');
      const [, runId] = /^run (\S+) QUEUED$/.exec(lines[0]!) ?? [];
      assert.ok(runId, lines[0]);
      assert.equal(lines[lines.length - 1], 'SUCCEEDED: all good');
      assert.deepEqual(
        lines.filter((line) => line.startsWith('[')),
        (await timelineTypes(hangar, runId)).map((type) => `[${eventLabel(type)}]`),
      );
      for (const line of ['assistant: hello', 'tool bash: {"command":"ls"}', 'tool bash completed'])
        assert.equal(count(lines, line), 1, `${line} in ${result.stdout}`);
      // The stream was cut after its first event and resumed from there.
      assert.ok(proxy.lastEventIds.length >= 2, JSON.stringify(proxy.lastEventIds));
      assert.equal(proxy.lastEventIds[0], undefined);
      assert.equal(proxy.lastEventIds[1], proxy.firstEventId());
    } finally {
      await proxy.close();
    }
  });

  test('run --follow exits 1 with the state and status message when the run fails; --harness picks the harness', async () => {
    const failed = await cli([
      'run',
      script({ say: 'trying' }, { fail: 'the tests are red' }),
      '--follow',
      '--harness',
      'script',
    ]);
    assert.equal(failed.code, 1, failed.stderr);
    const lines = failed.stdout.trimEnd().split('\n');
    assert.ok(lines.includes('assistant: trying'), failed.stdout);
    assert.ok(lines.includes('[Failed]'), failed.stdout);
    assert.equal(lines[lines.length - 1], 'FAILED: the tests are red');

    const created = await cli(['run', 'plain words', '--harness', 'text', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const { run_id: runId } = JSON.parse(created.stdout);
    assert.deepEqual((await getRun(hangar, runId)).agent_config.harness, { type: 'text' });
    await waitForState(hangar, runId, 'SUCCEEDED');
    // A plain-text harness's lines are printed as they are.
    const events = await cli(['runs', 'events', runId]);
    assert.equal(events.code, 0, events.stderr);
    assert.ok(events.stdout.includes('[Agent started]'), events.stdout);
  });

  test('runs followup continues an ended run; runs events follows it; conversation and transcript', async () => {
    const runId = await createRun(hangar, { prompt: script({ task: true }, { done: 'done' }) });
    await waitForState(hangar, runId, 'SUCCEEDED');

    const followup = await cli(['runs', 'followup', runId, 'and the docs', '--mode', 'plan', '--json']);
    assert.equal(followup.code, 0, followup.stderr);
    assert.deepEqual(JSON.parse(followup.stdout), {});
    const events = await cli(['runs', 'events', runId]);
    assert.equal(events.code, 0, events.stderr);
    const lines = events.stdout.trimEnd().split('\n');
    assert.equal(count(lines, '[Agent started]'), 2, events.stdout);
    assert.ok(lines.includes('[Follow-up received]'), events.stdout);
    assert.equal(lines[lines.length - 1], 'SUCCEEDED: done');
    assert.equal((await getRun(hangar, runId)).state, 'SUCCEEDED');

    const conversation = await cli(['runs', 'conversation', runId, '--json']);
    assert.equal(conversation.code, 0, conversation.stderr);
    assert.deepEqual(
      JSON.parse(conversation.stdout),
      (await hangar.request('GET', `/agent/runs/${runId}/conversation`)).body,
    );
    assert.equal(JSON.parse(conversation.stdout).steps.length, 2);

    const transcript = await cli(['runs', 'transcript', runId]);
    assert.equal(transcript.code, 0, transcript.stderr);
    const output = transcript.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      output.map((event) => event.type),
      ['text', 'done', 'text', 'done'],
    );
    assert.deepEqual(JSON.parse(output[2].text).followups, ['and the docs']);
  });

  test('errors: an unknown run is not retried; a bad mode is refused', async () => {
    const unknown = '00000000-0000-0000-0000-000000000000';
    for (const args of [
      ['runs', 'events', unknown],
      ['runs', 'followup', unknown, 'hi'],
      ['runs', 'conversation', unknown],
      ['runs', 'transcript', unknown],
    ]) {
      const result = await cli(args);
      assert.equal(result.code, 1, args.join(' '));
      assert.match(result.stderr, /HTTP 404/, args.join(' '));
    }
    const runId = await createRun(hangar, { prompt: script({ done: 'done' }) });
    const refused = await cli(['runs', 'followup', runId, 'x', '--mode', 'turbo']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--mode takes one of normal, plan, orchestrate; got "turbo"/);
  });
});
