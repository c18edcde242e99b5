/**
 * Agent-to-agent messaging end to end: a parent oz run (mode orchestrate, on one scripted Anthropic server) sends a
 * task to its child run (an oz run on another scripted server) with `send_message`, the child takes it with
 * `wait_for_messages` and answers, and the parent reads the answer. Then the API itself over HTTP with each
 * credential: shapes as the public orchestration client reads them (a send's `message_ids` array of strings; a
 * header's string `message_id`, `sender_run_id`, `subject`, `sent_at` and `delivered_at`/`read_at` string or null;
 * a read adds the string `body`; an event's string `event_type`, `run_id`, `occurred_at`, optional strings `ref_id`
 * and `execution_id`, integer `sequence`; a report answers an integer `sequence`), and every refusal: another
 * team's run and another tree's run answer the 404 of a run that does not exist.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { waitForState } from '../support/engine.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const KEY_ENV = 'ORCHESTRATION_TEST_KEY';
const parentModel = new AnthropicServer();
const childModel = new AnthropicServer();
let hangar: TestServer;
let configDirectory: string;

before(async () => {
  await Promise.all([parentModel.listen(), childModel.listen()]);
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-orchestration-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  const model = (id: string, server: AnthropicServer) => ({
    id,
    provider: 'ANTHROPIC',
    model: 'claude-sonnet-4-20250514',
    base_url: server.baseURL,
    api_key_env: KEY_ENV,
    cost: { input: 0, output: 0 },
  });
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_model: 'parent-test',
      builtin_harnesses: { oz: { max_steps: 8 } },
      models: [model('parent-test', parentModel), model('child-test', childModel)],
    }),
  );
  hangar = await startTestServer({ HANGAR_CONFIG: file, [KEY_ENV]: 'sk-test' });
});

after(async () => {
  await hangar?.stop();
  await Promise.all([parentModel.close(), childModel.close()]);
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** The tool results the model was sent in a request, as text. */
function toolResults(server: AnthropicServer, index: number): string {
  const messages = server.requests[index]?.body?.messages ?? [];
  return JSON.stringify(messages.at(-1));
}

describe('orchestration through messages', () => {
  test('a parent oz run hands a task to its child and reads its answer', { timeout: 120_000 }, async () => {
    // The parent waits first: the kick-off from its operator names the child, made once the parent exists.
    parentModel.script({ toolCalls: [{ name: 'wait_for_messages', input: { timeout_seconds: 300 } }] });
    const parentId = await createRun(hangar, { prompt: 'Orchestrate the sum', mode: 'orchestrate' });
    childModel.script(
      { toolCalls: [{ name: 'wait_for_messages', input: { timeout_seconds: 300 } }] },
      { toolCalls: [{ name: 'send_message', input: { to: [parentId], subject: 'answer', body: 'It is 42.' } }] },
      { text: 'Answered my parent.' },
    );
    const childId = await createRun(hangar, {
      prompt: 'Do what your parent asks',
      parent_run_id: parentId,
      config: { model_id: 'child-test' },
    });
    parentModel.script(
      { toolCalls: [{ name: 'send_message', input: { to: [childId], subject: 'task', body: 'What is 6 times 7?' } }] },
      { toolCalls: [{ name: 'wait_for_messages', input: { timeout_seconds: 300 } }] },
      { text: 'My child says it is 42.' },
    );
    const kickOff = await hangar.request('POST', '/agent/messages', {
      body: { to: [parentId], subject: 'go', body: `Your child run is ${childId}.`, sender_run_id: parentId },
    });
    assert.equal(kickOff.status, 200, JSON.stringify(kickOff.body));

    assert.equal((await waitForState(hangar, childId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    assert.equal((await waitForState(hangar, parentId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    // The child's wait returned the parent's task; the parent's second wait returned the child's answer.
    assert.match(toolResults(childModel, 1), /What is 6 times 7\?/);
    assert.match(toolResults(parentModel, 3), /It is 42\./);
    assert.match(toolResults(parentModel, 3), new RegExp(childId));

    const inbox = await hangar.request('GET', `/agent/messages/${parentId}`);
    assert.equal(inbox.status, 200);
    assert.deepEqual(
      inbox.body.map((header: any) => [header.subject, header.sender_run_id, typeof header.read_at]),
      [
        ['go', parentId, 'string'],
        ['answer', childId, 'string'],
      ],
    );
  });
});

describe('the messaging API', () => {
  let root: string;
  let child: string;
  let otherTree: string;
  let otherTeam: { apiKey: string; run: string };

  before(async () => {
    // Runs whose state does not matter here (each ends as soon as the scripted server, with no turn left, refuses).
    const idle = { config: { model_id: 'parent-test' }, prompt: 'stay' };
    root = await createRun(hangar, idle);
    child = await createRun(hangar, { ...idle, parent_run_id: root });
    otherTree = await createRun(hangar, idle);
    const team = await hangar.createTeamWithUser();
    otherTeam = { apiKey: team.apiKey, run: await createRun(hangar, idle, team.apiKey) };
    // Ended before any test reads the event cursor: a run still ending records vm_shutdown and its outcome after
    // whatever a test reported, and a cursor past the report would see them.
    for (const run of [root, child, otherTree]) await waitForState(hangar, run, 'SUCCEEDED', 'FAILED', 'ERROR');
  });

  test('send, list, read and mark delivered, each field typed', async () => {
    const sent = await hangar.request('POST', '/agent/messages', {
      body: { to: [child, root], subject: 'plan', body: 'Step one.', sender_run_id: root },
    });
    assert.equal(sent.status, 200);
    assert.deepEqual(Object.keys(sent.body), ['message_ids']);
    assert.equal(sent.body.message_ids.length, 2);
    for (const id of sent.body.message_ids) assert.equal(typeof id, 'string');

    const listed = await hangar.request('GET', `/agent/messages/${child}?unread=true&limit=10`);
    assert.equal(listed.status, 200);
    assert.ok(Array.isArray(listed.body));
    const [header] = listed.body;
    assert.deepEqual(Object.keys(header).sort(), [
      'delivered_at',
      'message_id',
      'read_at',
      'sender_run_id',
      'sent_at',
      'subject',
    ]);
    for (const key of ['message_id', 'sender_run_id', 'subject', 'sent_at']) assert.equal(typeof header[key], 'string');
    assert.equal(header.delivered_at, null);
    assert.equal(header.read_at, null);
    assert.equal(header.message_id, sent.body.message_ids[0]);

    const delivered = await hangar.request('POST', `/agent/messages/${header.message_id}/delivered`);
    assert.equal(delivered.status, 200);
    const read = await hangar.request('GET', `/agent/messages/${header.message_id}/read`);
    assert.equal(read.status, 200);
    assert.equal(read.body.body, 'Step one.');
    for (const key of ['message_id', 'sender_run_id', 'subject', 'body', 'sent_at', 'delivered_at', 'read_at'])
      assert.equal(typeof read.body[key], 'string', key);
    assert.deepEqual((await hangar.request('GET', `/agent/messages/${child}?unread=true`)).body, []);
    const later = await hangar.request('GET', `/agent/messages/${child}?since=${encodeURIComponent(header.sent_at)}`);
    assert.deepEqual(later.body, []);
  });

  test('events: a cursor over the watched runs, with reported events in the same sequence', async () => {
    const reported = await hangar.request('POST', `/agent/events/${child}`, {
      body: { event_type: 'waiting_for_children', ref_id: 'batch-1' },
    });
    assert.equal(reported.status, 200);
    assert.ok(Number.isInteger(reported.body.sequence));
    const events = await hangar.request('GET', `/agent/events?run_ids=${root},${child}&since=0&limit=100`);
    assert.equal(events.status, 200);
    assert.ok(Array.isArray(events.body));
    for (const event of events.body) {
      for (const key of ['event_type', 'run_id', 'occurred_at']) assert.equal(typeof event[key], 'string', key);
      assert.ok(Number.isInteger(event.sequence));
      for (const key of ['ref_id', 'execution_id']) if (key in event) assert.equal(typeof event[key], 'string');
    }
    const sequences = events.body.map((event: any) => event.sequence);
    assert.deepEqual(
      sequences,
      [...sequences].sort((a, b) => a - b),
    );
    assert.ok(events.body.some((event: any) => event.event_type === 'oz_run_created' && event.run_id === root));
    const mine = events.body.find((event: any) => event.sequence === reported.body.sequence);
    assert.deepEqual([mine.event_type, mine.run_id, mine.ref_id], ['waiting_for_children', child, 'batch-1']);
    const after = await hangar.request('GET', `/agent/events?run_ids=${child}&since=${reported.body.sequence}`);
    assert.deepEqual(after.body, []);
    const spoofed = await hangar.request('POST', `/agent/events/${child}`, { body: { event_type: 'oz_run_done' } });
    assert.equal(spoofed.status, 400);
  });

  test("another team's run and another tree's run are the 404 of a missing one", async () => {
    const missing = crypto.randomUUID();
    // A member of another team, on this team's runs.
    const asOther = (method: string, url: string, body?: unknown) =>
      hangar.request(method, url, { apiKey: otherTeam.apiKey, body });
    const answers = [
      await asOther('GET', `/agent/messages/${root}`),
      await asOther('GET', `/agent/events?run_ids=${root}`),
      await asOther('POST', `/agent/events/${root}`, { event_type: 'poke' }),
      await asOther('POST', '/agent/messages', { to: [root], subject: 's', body: 'b', sender_run_id: otherTeam.run }),
      await asOther('POST', '/agent/messages', { to: [otherTeam.run], subject: 's', body: 'b', sender_run_id: root }),
      // This team's member, bridging two trees.
      await hangar.request('POST', '/agent/messages', {
        body: { to: [otherTree], subject: 's', body: 'b', sender_run_id: root },
      }),
      await hangar.request('GET', `/agent/messages/${missing}`),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 404, JSON.stringify(answer.body));
      assert.equal(answer.body.error_code, 'resource_not_found');
    }
    const ids = (await hangar.request('GET', `/agent/messages/${child}`)).body.map((header: any) => header.message_id);
    const readByOther = await asOther('GET', `/agent/messages/${ids[0]}/read`);
    assert.equal(readByOther.status, 404);
    assert.ok(!JSON.stringify(readByOther.body).includes('Step one'));
    assert.equal((await hangar.request('GET', `/agent/messages/${root}`, { apiKey: null })).status, 401);
  });
});
