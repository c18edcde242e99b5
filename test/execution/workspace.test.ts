import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  eventually,
  harnessEnv,
  outputTexts,
  script,
  timelineTypes,
  waitForRun,
  waitForState,
} from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const git = new GitFixtures();
let hangar: TestServer;
before(async () => {
  git.createRepo('acme', 'app', { 'README.md': '# app\n', 'setup.sh': 'echo from-setup > built.txt\n' });
  git.createRepo('acme', 'lib', { 'lib.txt': 'lib\n' });
  // The data directory under a 0700 directory, as under root's home: a root server's run user cannot pass through
  // it, and the workspaces are Hangar's own (issue 48); a 1777 /tmp parent hid that.
  hangar = await startTestServer(harnessEnv({}, { HANGAR_GIT_BASE_URL: git.baseUrl }), { privateParent: true });
});
after(async () => {
  await hangar.stop();
  git.remove();
});

async function environment(body: Record<string, unknown>): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', {
    body: { name: `env ${Math.random()}`, ...body },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.uid;
}

const repos = [
  { owner: 'acme', repo: 'app' },
  { owner: 'acme', repo: 'lib' },
];

const text = (runId: string) => outputTexts(hangar, runId);

describe('workspace and environment setup', () => {
  test('repositories are cloned with git and setup commands run in order before the agent starts', async () => {
    const environmentId = await environment({
      github_repos: repos,
      setup_commands: ['sh app/setup.sh && mv built.txt app/', 'cat app/built.txt > second.txt'],
    });
    const runId = await createRun(hangar, {
      prompt: script({ ls: '.' }, { cat: 'second.txt' }, { cat: 'lib/lib.txt' }),
      config: { environment_id: environmentId },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
    const [listing, second, lib] = await text(runId);
    assert.deepEqual(
      JSON.parse(listing!).filter((name: string) => !name.startsWith('.')),
      ['app', 'lib', 'second.txt'],
    );
    assert.equal(second, 'from-setup\n');
    assert.equal(lib, 'lib\n');
    const types = await timelineTypes(hangar, runId);
    assert.deepEqual(
      types.filter((type) => type.startsWith('environment_')),
      [
        'environment_setup_started',
        'environment_repo_cloned',
        'environment_repo_cloned',
        'environment_setup_command',
        'environment_setup_command',
        'environment_setup_done',
      ],
    );
    assert.ok(types.indexOf('environment_setup_done') < types.indexOf('agent_started'));
    const env = await hangar.request('GET', `/api/v1/environments/${environmentId}`);
    assert.equal(env.body.setup_failed, false);
  });

  test('a failing setup command ends the run FAILED with environment_setup_failed, naming the command and exit code', async () => {
    const environmentId = await environment({
      github_repos: repos,
      setup_commands: ['true', 'echo boom >&2; exit 3', 'touch never'],
    });
    const runId = await createRun(hangar, {
      prompt: script({ say: 'never runs' }),
      config: { environment_id: environmentId },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'FAILED');
    assert.equal(run.status_message.error_code, 'environment_setup_failed');
    assert.match(run.status_message.message, /`echo boom >&2; exit 3` exited with code 3/);
    assert.equal(run.status_message.session_debug_until, undefined);
    const events = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
    const failedStep = events.find((event: any) => event.event_type === 'environment_setup_step_failed');
    assert.equal(failedStep.payload.exit_code, 3);
    assert.match(failedStep.payload.output_tail, /boom/);
    assert.ok(!events.some((event: any) => event.event_type === 'agent_started'));
    assert.ok(events.some((event: any) => event.event_type === 'vm_shutdown'));
    assert.equal((await hangar.request('GET', `/api/v1/environments/${environmentId}`)).body.setup_failed, true);
    // No workspace is left behind without a debug window.
    assert.deepEqual(fs.readdirSync(`${workspaceDir()}`), []);
  });

  test('a repository that cannot be cloned fails the setup the same way', async () => {
    const environmentId = await environment({ github_repos: [{ owner: 'acme', repo: 'missing' }] });
    const runId = await createRun(hangar, { prompt: 'x', config: { environment_id: environmentId } });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'FAILED');
    assert.equal(run.status_message.error_code, 'environment_setup_failed');
    assert.match(run.status_message.message, /cloning acme\/missing failed/);
  });

  test('with a debug window the workspace is kept, a follow-up starts a debug agent in it, and the run stays FAILED', async () => {
    const environmentId = await environment({
      github_repos: repos,
      setup_commands: ['echo partial > partial.txt; exit 7'],
      failure_session_retention_minutes: 5,
    });
    const runId = await createRun(hangar, { prompt: 'build it', config: { environment_id: environmentId } });
    const failed = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(failed.state, 'FAILED');
    assert.equal(failed.status_message.error_code, 'environment_setup_failed');
    const until = Date.parse(failed.status_message.session_debug_until);
    assert.ok(until > Date.now(), 'the window is open');
    const kept = fs.readdirSync(`${workspaceDir()}`);
    assert.equal(kept.length, 1);
    assert.ok(fs.existsSync(`${workspaceDir()}/${kept[0]}/partial.txt`));

    const followup = await hangar.request('POST', `/agent/runs/${runId}/followups`, {
      body: { message: 'why did it fail?' },
    });
    assert.equal(followup.status, 200);
    await eventually('the debug agent finished', async () =>
      (await timelineTypes(hangar, runId)).includes('debug_agent_finished'),
    );
    const after = await waitForRun(hangar, runId, (run) => run.is_sandbox_running === false);
    assert.equal(after.state, 'FAILED');
    assert.equal(after.status_message.message, failed.status_message.message);
    assert.equal(after.status_message.error_code, 'environment_setup_failed');
    assert.ok(Date.parse(after.status_message.session_debug_until) >= until, 'a debug turn extends the idle window');
    assert.ok((await text(runId)).includes('debugging'));
    const types = await timelineTypes(hangar, runId);
    assert.ok(types.includes('debug_agent_started'));
    assert.equal(types.filter((type) => type === 'agent_started').length, 0);

    // When the window closes the workspace goes; a later follow-up is the ordinary continuation.
    await hangar.server.engine!.debugSessions.close(runId);
    assert.deepEqual(fs.readdirSync(`${workspaceDir()}`), []);
    const again = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'try again' } });
    assert.equal(again.status, 200);
    const retried = await waitForRun(
      hangar,
      runId,
      (run) =>
        run.state === 'FAILED' &&
        run.status_message.session_debug_until !== failed.status_message.session_debug_until &&
        !run.is_sandbox_running,
    );
    assert.equal(retried.status_message.error_code, 'environment_setup_failed');
    assert.ok((await timelineTypes(hangar, runId)).filter((type) => type === 'environment_setup_started').length === 2);
    await hangar.server.engine!.debugSessions.close(runId);
  });

  test('a follow-up after the debug window has passed continues the run ordinarily', async () => {
    const environmentId = await environment({ setup_commands: ['exit 1'], failure_session_retention_minutes: 1 });
    const runId = await createRun(hangar, { prompt: 'x', config: { environment_id: environmentId } });
    await waitForState(hangar, runId, 'FAILED');
    // The window is over (as if its minute had passed).
    const past = new Date(Date.now() - 1000).toISOString();
    await hangar.db
      .updateTable('runs')
      .set({ debug_session: JSON.stringify({ owner: 'x', workspace: 'x', until: past }) })
      .where('id', '=', runId)
      .execute();
    assert.equal(
      (await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'again' } })).status,
      200,
    );
    const run = await waitForRun(
      hangar,
      runId,
      (run) => run.state !== 'FAILED' || run.status_message?.session_debug_until !== undefined,
    );
    assert.ok(['QUEUED', 'PENDING', 'CLAIMED', 'FAILED'].includes(run.state));
    const events = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
    assert.ok(
      events.some((event: any) => event.event_type === 'followup_received' && event.payload.route === 'new_execution'),
    );
    await waitForState(hangar, runId, 'FAILED');
    await hangar.server.engine!.debugSessions.closeAll();
  });
});

describe('HANGAR_WORKSPACE_DIR', () => {
  test('workspaces are made there and removed after; under bwrap a run sees only its own', async () => {
    // Outside /tmp and the data directory, which the sandbox hides anyway: this checks that the workspace
    // directory itself is hidden.
    const workspaceDir = fs.mkdtempSync('/var/tmp/hangar-workspaces-');
    const other = await startTestServer(harnessEnv({}, { HANGAR_WORKSPACE_DIR: workspaceDir }), {
      privateParent: true,
    });
    try {
      fs.mkdirSync(`${workspaceDir}/another-run.1`);
      fs.writeFileSync(`${workspaceDir}/another-run.1/secret.txt`, 'not yours');
      const runId = await createRun(other, { prompt: script({ ls: workspaceDir }) });
      const run = await waitForState(other, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
      const [listing] = await outputTexts(other, runId);
      const events = (await other.request('GET', `/agent/runs/${runId}/timeline`)).body.events;
      const sandbox = events.find((event: any) => event.event_type === 'worker_container_ready').payload.sandbox;
      const expected = sandbox === 'bwrap' ? [`${runId}.1`] : ['another-run.1', `${runId}.1`].sort();
      assert.deepEqual(JSON.parse(listing!), expected);
      assert.deepEqual(fs.readdirSync(workspaceDir), ['another-run.1']);
      assert.equal(fs.existsSync(`${other.dataDir}/workspaces`), false, 'nothing is made in the data directory');
    } finally {
      await other.stop();
      fs.rmSync(workspaceDir, { recursive: true, force: true });
    }
  });
});

const workspaceDir = () => hangar.workspaceDir;
