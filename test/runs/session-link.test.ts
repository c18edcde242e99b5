// Issue 24 item 3: every run's detail has a session link (its page in the dashboard, under HANGAR_PUBLIC_URL) and,
// once it has one, its conversation id; the CLI prints the link wherever it shows runs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { getRun, harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const PUBLIC_URL = 'https://hangar.example.test/team-a';

describe('session link and conversation id', () => {
  /** Runs its runs (script harness); links follow the address it listens on. */
  let running: TestServer;
  /** API only, behind a public address (a reverse proxy): its runs stay QUEUED. */
  let proxied: TestServer;

  before(async () => {
    running = await startTestServer(harnessEnv());
    proxied = await startTestServer({ HANGAR_PUBLIC_URL: `${PUBLIC_URL}/` }, { role: 'api' });
  });
  after(async () => {
    await running?.stop();
    await proxied?.stop();
  });

  test('every run, listed or alone, links to its dashboard page under HANGAR_PUBLIC_URL', async () => {
    const runId = await createRun(proxied, { title: 'Queued run' });
    const detail = await getRun(proxied, runId);
    assert.equal(detail.state, 'QUEUED');
    assert.equal(detail.session_link, `${PUBLIC_URL}/runs/${runId}`);
    // Not started: no conversation yet.
    assert.equal(detail.conversation_id, undefined);
    const listed = await proxied.request('GET', '/agent/runs');
    assert.equal(listed.status, 200);
    const item = listed.body.runs.find((run: { run_id: string }) => run.run_id === runId);
    assert.equal(item.session_link, `${PUBLIC_URL}/runs/${runId}`);
  });

  test('without HANGAR_PUBLIC_URL the link is on the listening address, and opens the run in the dashboard', async () => {
    const runId = await createRun(running, { prompt: script({ done: 'linked' }), title: 'Linked run' });
    const detail = await waitForState(running, runId, 'SUCCEEDED');
    assert.equal(detail.session_link, `${running.url}/runs/${runId}`);
    const page = await fetch(detail.session_link, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /<div id="root">/);
  });

  test('a run that started has a conversation id, which finds its conversation and continues it', async () => {
    const runId = await createRun(running, { prompt: script({ say: 'first turn' }, { done: 'ok' }) });
    const detail = await waitForState(running, runId, 'SUCCEEDED');
    assert.match(detail.conversation_id, /^[0-9a-f-]{36}$/);
    const conversation = await running.request('GET', `/agent/conversations/${detail.conversation_id}`);
    assert.equal(conversation.status, 200, JSON.stringify(conversation.body));
    assert.equal(conversation.body.conversation_id, detail.conversation_id);
    // A run that continues it has the id from its creation, before it starts.
    const next = await createRun(running, {
      prompt: script({ done: 'second' }),
      conversation_id: detail.conversation_id,
    });
    assert.equal((await getRun(running, next)).conversation_id, detail.conversation_id);
    await waitForState(running, next, 'SUCCEEDED');
  });

  test('the CLI prints the link beside each listed run, in a run it shows, and before following one', async () => {
    const runId = await createRun(proxied, { title: 'Listed in the CLI' });
    const env = { url: proxied.url, apiKey: proxied.apiKey };
    const list = await hangarCli(['runs', 'list'], env);
    assert.equal(list.code, 0, list.stderr);
    const row = list.stdout.split('\n').find((line) => line.startsWith(`${runId}  `));
    assert.ok(row, list.stdout);
    assert.match(row, new RegExp(`Listed in the CLI  ${PUBLIC_URL}/runs/${runId}$`));

    const shown = await hangarCli(['runs', 'get', runId], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^Dashboard: +${PUBLIC_URL}/runs/${runId}$`, 'm'));
    const json = await hangarCli(['runs', 'get', runId, '--json'], env);
    assert.equal(JSON.parse(json.stdout).session_link, `${PUBLIC_URL}/runs/${runId}`);

    const ended = await createRun(running, { prompt: script({ done: 'followed' }) });
    await waitForState(running, ended, 'SUCCEEDED');
    const events = await hangarCli(['runs', 'events', ended], { url: running.url, apiKey: running.apiKey });
    assert.equal(events.code, 0, events.stderr);
    const followed = events.stdout.trimEnd().split('\n');
    assert.equal(followed[0], `open in dashboard: ${running.url}/runs/${ended}`);
    assert.equal(followed[followed.length - 1], 'SUCCEEDED: followed');
  });
});
