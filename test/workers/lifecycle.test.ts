import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import {
  eventually,
  eventuallySignalled,
  harnessEnv,
  outputTexts,
  processesWith,
  script,
  timelineTypes,
  waitForState,
} from '../support/engine.js';
import { skillFile } from '../support/git.js';
import { stopChild, waitForExit } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  connectedWorkers,
  ProtocolClient,
  startWorker,
  type WorkerProcess,
  waitForConnections,
} from '../support/workers.js';

const status = (running: Array<{ task_id: string; execution_id: number }> = [], max = 1) => ({
  running,
  max_concurrent_tasks: max,
  accepting: true,
});

describe('self-hosted workers: protocol, failures and shutdown', () => {
  let hangar: TestServer;
  const workers: WorkerProcess[] = [];
  const clients: ProtocolClient[] = [];
  const worker = (id: string, args: string[] = []) => {
    const started = startWorker(hangar, id, { env: harnessEnv(), args });
    workers.push(started);
    return started;
  };
  const client = async (id: string) => {
    const connected = await ProtocolClient.connect(hangar, id);
    clients.push(connected);
    return connected;
  };

  before(async () => {
    // Leases of 6 s (harnessEnv) and heartbeats every second: failures show within seconds.
    hangar = await startTestServer(harnessEnv({}, { HANGAR_WORKER_HEARTBEAT_SECONDS: '1' }));
  });
  after(async () => {
    for (const connected of clients) await connected.close();
    for (const started of workers)
      if (started.child.exitCode === null && started.child.signalCode === null)
        await stopChild(started.child, 'SIGKILL');
    await hangar.stop();
  });

  test('a task rejected at capacity goes back to the queue and runs on another connection', async () => {
    const full = await client('box-reject');
    full.send('worker_status', status());
    const runId = await createRun(hangar, {
      prompt: script({ say: 'second home' }),
      config: { worker_host: 'box-reject' },
    });
    const assignment = await full.next((message) => message.type === 'task_assignment');
    assert.equal(assignment.data.task_id, runId);
    assert.equal(assignment.data.execution_id, 1);
    assert.match(assignment.data.env_vars.HANGAR_TASK_TOKEN, /^hgt_/);
    assert.equal(assignment.data.task.prompt, script({ say: 'second home' }));
    full.send('task_rejected', { task_id: runId, execution_id: 1, reason: 'busy' });
    await eventuallySignalled('the run is queued again', async () =>
      (await timelineTypes(hangar, runId)).includes('run_requeued'),
    );
    worker('box-reject');
    assert.equal((await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR')).state, 'SUCCEEDED');
    assert.deepEqual(await outputTexts(hangar, runId), ['second home']);
  });

  test('a terminal message sent again after a reconnect is applied once', async () => {
    const first = await client('box-reconnect');
    first.send('worker_status', status());
    const runId = await createRun(hangar, { prompt: script({ say: 'x' }), config: { worker_host: 'box-reconnect' } });
    await first.next((message) => message.type === 'task_assignment' && message.data.task_id === runId);
    const task = { task_id: runId, execution_id: 1 };
    const claimed = await first.call('task_claimed', task);
    assert.equal(claimed.result?.moved, true, JSON.stringify(claimed));
    const started = await first.call('task_started', { ...task, harness: 'script', conversation_id: 'c0nversation' });
    assert.deepEqual(started.result, { moved: true, followups: [] });
    await first.close();

    const second = await client('box-reconnect');
    second.send('worker_status', status([task]));
    const output = await second.call('task_output', {
      ...task,
      lines: [{ stream: 'output', line: '{"type":"text","text":"after the reconnect"}' }],
    });
    assert.deepEqual(output.result, { held: true });
    const completion = { ...task, state: 'SUCCEEDED', usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } };
    assert.equal((await second.call('task_completed', completion)).result.result, 'ended');
    assert.equal((await second.call('task_completed', completion)).result.result, 'lost');
    assert.equal((await second.call('task_failed', { ...task, message: 'too late' })).result.result, 'lost');
    const run = await waitForState(hangar, runId, 'SUCCEEDED');
    assert.equal(run.request_usage.total_tokens, 7);
    assert.equal((await timelineTypes(hangar, runId)).filter((type) => type === 'oz_run_done').length, 1);
    assert.deepEqual(await outputTexts(hangar, runId), ['after the reconnect']);
    // Writes for a run the worker no longer holds change nothing.
    assert.deepEqual((await second.call('task_events', { ...task, events: [{ type: 'late' }] })).result, {
      held: false,
    });
  });

  test('unknown message types and frames that are not JSON are ignored; a malformed known one is answered', async () => {
    const connected = await client('box-garbage');
    connected.socket.send('not json');
    connected.send('from_the_future', { anything: true });
    const refused = await connected.call('task_claimed', { task_id: 'x' });
    assert.equal(refused.ok, false);
    assert.match(refused.error, /task_claimed/);
    connected.send('worker_status', status());
    await waitForConnections(hangar, 'box-garbage', 1);
  });

  test('another team cannot act on a run through its own worker of the same name', async () => {
    const owner = await client('box-shared-name');
    owner.send('worker_status', status());
    const runId = await createRun(hangar, {
      prompt: script({ say: 'mine' }),
      config: { worker_host: 'box-shared-name' },
    });
    await owner.next((message) => message.type === 'task_assignment' && message.data.task_id === runId);
    const other = await hangar.createTeamWithUser();
    const intruder = await ProtocolClient.connect(hangar, 'box-shared-name', other.workerKey);
    clients.push(intruder);
    assert.equal((await intruder.call('task_claimed', { task_id: runId, execution_id: 1 })).result.moved, false);
    assert.equal(
      (await intruder.call('task_failed', { task_id: runId, execution_id: 1, message: 'hijacked' })).result.result,
      'lost',
    );
    assert.deepEqual(
      (await intruder.call('task_events', { task_id: runId, execution_id: 1, events: [{ type: 'x' }] })).result,
      { held: false },
    );
    assert.equal((await waitForState(hangar, runId, 'PENDING')).state, 'PENDING');
  });

  test("a worker cannot pull another team's conversation into its run's history", async () => {
    const theirs = await createRun(hangar, { prompt: script({ say: 'the other team only' }) });
    const conversationId = (await waitForState(hangar, theirs, 'SUCCEEDED')).conversation_id;
    assert.ok(conversationId);
    const team = await hangar.createTeamWithUser();
    const connected = await ProtocolClient.connect(hangar, 'box-conversation', team.workerKey);
    clients.push(connected);
    connected.send('worker_status', status());
    const runId = await createRun(
      hangar,
      { prompt: script({ say: 'x' }), config: { worker_host: 'box-conversation' } },
      team.apiKey,
    );
    await connected.next((message) => message.type === 'task_assignment' && message.data.task_id === runId);
    const task = { task_id: runId, execution_id: 1 };
    await connected.call('task_claimed', task);
    await connected.call('task_started', { ...task, harness: 'script', conversation_id: conversationId });
    await connected.call('task_output', { ...task, lines: [{ stream: 'output', line: 'own line' }] });
    await connected.call('task_completed', task);
    connected.send('worker_status', status());
    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
      body: { message: 'again' },
      apiKey: team.apiKey,
    });
    assert.equal(followup.status, 200);
    const next = await connected.next(
      (message) => message.type === 'task_assignment' && message.data.execution_id === 2,
    );
    assert.deepEqual(
      next.data.history.map((entry: any) => entry.line),
      ['own line'],
    );
  });

  test('a connection that stops answering pings is closed and leaves the presence list', async () => {
    const silent = await client('box-silent');
    await waitForConnections(hangar, 'box-silent', 1);
    // Stop reading: pings go unanswered.
    (silent.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    await eventually(
      'the silent connection is gone',
      async () => !(await connectedWorkers(hangar)).some((entry) => entry.worker_host === 'box-silent'),
      15_000,
    );
  });

  test('a worker killed mid-run leaves its run in progress until the lease passes; then it ends ERROR, retryable', async () => {
    const doomed = worker('box-doomed');
    const runId = await createRun(hangar, {
      prompt: script({ say: 'working' }, { sleep: 120_000 }),
      config: { worker_host: 'box-doomed' },
    });
    await waitForState(hangar, runId, 'INPROGRESS');
    process.kill(-doomed.child.pid!, 'SIGKILL');
    await waitForExit(doomed.child).catch(() => undefined);
    const ended = await waitForState(hangar, runId, 'ERROR', 'SUCCEEDED', 'FAILED');
    assert.equal(ended.state, 'ERROR');
    assert.equal(ended.status_message.error_code, 'resource_unavailable');
    assert.equal(ended.status_message.retryable, true);
  });

  test('a run stopped on the server (an operator cancels it) is stopped on the worker, process tree and all', async () => {
    worker('box-cancel');
    const marker = `hangar-worker-cancel-${Date.now()}`;
    const runId = await createRun(hangar, {
      prompt: script({ sleepers: marker }, { sleep: 120_000 }),
      config: { worker_host: 'box-cancel' },
    });
    await eventually('the harness started its children', async () =>
      (await outputTexts(hangar, runId).catch((): string[] => [])).includes('sleepers started'),
    );
    assert.ok(processesWith(marker).length >= 2);
    assert.equal((await hangar.request('POST', `/agent/runs/${runId}/cancel`)).status, 422, 'the API refuses');
    const member = await hangar.addUser(hangar.teamUid, 'member');
    assert.equal(
      (await hangar.request('POST', `/api/v1/admin/runs/${runId}/cancel`, { apiKey: member.apiKey })).status,
      403,
      'operators only',
    );
    const stopped = await hangarCli(['runs', 'cancel', runId, '--operator'], {
      url: hangar.url,
      apiKey: hangar.apiKey,
    });
    assert.equal(stopped.code, 0, stopped.stderr);
    await eventually('every process of the run is gone', () => processesWith(marker).length === 0);
    assert.equal((await waitForState(hangar, runId, 'CANCELLED')).state, 'CANCELLED');
    await eventually(
      'the run no longer has a sandbox',
      async () => (await hangar.request('GET', `/agent/runs/${runId}`)).body.is_sandbox_running === false,
    );
    assert.equal((await hangar.request('POST', `/api/v1/admin/runs/${runId}/cancel`)).status, 400, 'an ended run');
    assert.equal((await hangar.request('POST', `/api/v1/admin/runs/no-such-run/cancel`)).status, 404);
  });

  test('SIGTERM: the worker takes no new task, lets the running one finish, and exits 0', async () => {
    const leaving = worker('box-sigterm', ['--shutdown-grace-seconds', '30']);
    const runId = await createRun(hangar, {
      prompt: script({ sleep: 1500 }, { say: 'finished in time' }),
      config: { worker_host: 'box-sigterm' },
    });
    await waitForState(hangar, runId, 'INPROGRESS');
    leaving.child.kill('SIGTERM');
    const exit = await waitForExit(leaving.child);
    assert.equal(exit.code, 0, leaving.output());
    assert.equal(await getState(runId), 'SUCCEEDED');
    const next = await createRun(hangar, { prompt: script({ say: 'x' }), config: { worker_host: 'box-sigterm' } });
    // That no worker takes it can only be watched for a while: no event tells of a run not claimed.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await getState(next), 'QUEUED');
  });

  test('SIGTERM past the grace period: the running task ends ERROR (retryable) and the worker exits 0', async () => {
    const leaving = worker('box-impatient', ['--shutdown-grace-seconds', '1']);
    const runId = await createRun(hangar, {
      prompt: script({ sleep: 120_000 }),
      config: { worker_host: 'box-impatient' },
    });
    await waitForState(hangar, runId, 'INPROGRESS');
    leaving.child.kill('SIGTERM');
    assert.equal((await waitForExit(leaving.child)).code, 0, leaving.output());
    const ended = await waitForState(hangar, runId, 'ERROR', 'SUCCEEDED', 'FAILED');
    assert.equal(ended.state, 'ERROR');
    assert.equal(ended.status_message.error_code, 'resource_unavailable');
  });

  test('skills a worker finds in its directories show in GET /agent with source.worker_host', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-worker-skills-'));
    fs.mkdirSync(path.join(directory, 'review'), { recursive: true });
    fs.writeFileSync(
      path.join(directory, 'review', 'SKILL.md'),
      skillFile('local-review', 'Reviews changes on the build box'),
    );
    fs.mkdirSync(path.join(directory, 'broken'), { recursive: true });
    fs.writeFileSync(path.join(directory, 'broken', 'SKILL.md'), 'no front matter');
    worker('box-skills', ['--skills-dir', directory]);
    let variant: any;
    await eventually('the skill is listed', async () => {
      const response = await hangar.request('GET', '/agent');
      variant = response.body.agents?.find((agent: any) => agent.name === 'local-review')?.variants[0];
      return variant !== undefined;
    });
    assert.equal(variant.source.worker_host, 'box-skills');
    assert.equal(variant.source.skill_path, path.join(directory, 'review', 'SKILL.md'));
    assert.equal(variant.description, 'Reviews changes on the build box');
    const other = await hangar.createTeamWithUser();
    const theirs = await hangar.request('GET', '/agent', { apiKey: other.apiKey });
    assert.ok(!theirs.body.agents.some((agent: any) => agent.name === 'local-review'));
  });

  async function getState(runId: string): Promise<string> {
    return (await hangar.request('GET', `/agent/runs/${runId}`)).body.state;
  }
});
