import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { harnessEnv, script, timelineTypes, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('a run is executed by a command harness', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  test('QUEUED to SUCCEEDED with a timeline event per step, usage, artifact and conversation', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ say: 'hello' }, { tool: 'ls' }, { usage: true }, { artifact: true }, { done: 'all good' }),
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
    assert.equal(run.status_message?.message, 'all good');
    assert.ok(run.started_at);
    assert.match(run.run_time, /^PT/);
    assert.equal(run.is_sandbox_running, false);
    assert.equal(run.request_usage.total_tokens, 15);
    assert.equal(run.artifacts[0].artifact_type, 'PULL_REQUEST');
    assert.ok(run.conversation_id);
    const types = await timelineTypes(hangar, runId);
    for (const type of [
      'oz_run_created',
      'run_dispatched',
      'oz_run_claimed',
      'worker_container_ready',
      'agent_started',
      'oz_run_done',
      'vm_shutdown',
    ]) {
      assert.ok(types.includes(type), `${type} in ${types}`);
    }
    const conversation = await hangar.request('GET', `/agent/runs/${runId}/conversation`);
    assert.equal(conversation.status, 200, JSON.stringify(conversation.body));
    const [step] = conversation.body.steps;
    assert.equal(step.summary, 'all good');
    assert.deepEqual(
      step.messages.map((message: { role: string }) => message.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(step.messages[1].content[0].text, 'hello');
    assert.equal(step.messages[1].content[1].type, 'action');
    assert.equal(step.messages[1].content[1].category, 'command');
  });
});
