import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { waitForStateAs } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { AnthropicServer } from '../support/model-servers/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 47 finding 6, for real, under bwrap: team A shares an environment whose setup plants git settings that run
// its own scripts (a core.fsmonitor in ~/.gitconfig and in the clone's .git/config, a clean filter, a pre-commit
// hook); team B's agent runs plain git in it. Each planted script records that it ran, with whether it saw the run's
// task token, in a file the probe harness prints. And B's team secrets go into a run in A's environment only once
// B's admin allowed that environment.
const skip = resolveSandboxMode(undefined).mode.kind !== 'bwrap' ? 'bwrap does not work on this machine' : false;
const TICKETS_SERVER = fileURLToPath(new URL('../support/mcp/tickets-server.mjs', import.meta.url));
const B_SECRET_VALUE = 'team-b-mcp-secret-51c9';
const RUN_TIMEOUT_MS = 120_000;

/** The planted scripts: each appends `HOOK-RAN:<kind> token=<set|none>` to hook-ran at the workspace's top. */
const PLANT = [
  // Paths relative to the repository each runs in (every repository here is at the workspace's top), so that the
  // planted settings still work in a workspace restored from a setup snapshot, at another path.
  `for kind in global local filter precommit; do printf '#!/bin/sh\necho "HOOK-RAN:%s token=$([ -n "$HANGAR_TASK_TOKEN" ] && echo set || echo none)" >> ../hook-ran\ncat\n' "$kind" > "hook-$kind" && chmod +x "hook-$kind" || exit 1; done`,
  // ~/.gitconfig (setup's HOME is the agent's): the fsmonitor of every repository without its own, and a name.
  'git config --global core.fsmonitor ../hook-global && git config --global user.name "Setup Person"',
  // The clone's own configuration: its fsmonitor, a clean filter for every file, a pre-commit hook.
  'git -C app config core.fsmonitor ../hook-local && git -C app config filter.spy.clean ../hook-filter',
  "echo '* filter=spy' > app/.git/info/attributes && cp hook-precommit app/.git/hooks/pre-commit",
];

/** What an agent does with git: status, diff, add, commit in the clone, then status in a repository of its own. */
const PROBE = [
  'cd app && echo change >> README.md',
  'git status --porcelain >/dev/null 2>&1; git diff >/dev/null 2>&1; git add -A >/dev/null 2>&1',
  'git -c user.email=agent@hangar.invalid commit -qm change >/dev/null 2>&1',
  'echo "NAME:$(git config user.name)"',
  'cd .. && git init -q scratch && cd scratch && git status >/dev/null 2>&1; cd ..',
  'cat hook-ran 2>/dev/null; echo PROBE-END',
].join('\n');

const anthropic = new AnthropicServer();
const git = new GitFixtures();
let hangar: TestServer;
let configDirectory: string;

before(async () => {
  if (skip) return;
  await anthropic.listen();
  git.createRepo('acme', 'app', { 'README.md': 'app\n' });
  configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-shared-env-'));
  const file = path.join(configDirectory, 'hangar.yaml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_model: 'sonnet-test',
      harnesses: {
        gitprobe: { command: ['bash', '-c', PROBE], output: 'text', timeout_minutes: 2 },
        // Holds the team's one slot until the test lets it go (it touches `go` in the workspace).
        waiter: {
          command: ['bash', '-c', 'touch waiting; while [ ! -e go ]; do sleep 0.1; done'],
          output: 'text',
          timeout_minutes: 2,
        },
      },
      builtin_harnesses: { oz: { max_steps: 4 } },
      models: [
        {
          id: 'sonnet-test',
          provider: 'ANTHROPIC',
          model: 'claude-sonnet-4-20250514',
          base_url: anthropic.baseURL,
          api_key_env: 'SHARED_ENV_TEST_KEY',
          cost: { input: 0, output: 0 },
        },
      ],
    }),
  );
  hangar = await startTestServer({
    HANGAR_CONFIG: file,
    HANGAR_SANDBOX: 'bwrap',
    HANGAR_GIT_BASE_URL: git.baseUrl,
    SHARED_ENV_TEST_KEY: 'sk-test',
    // One run at a time per team: a run waits in the queue behind another (the consent taken back meanwhile).
    HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM: '1',
    // Setup snapshots on: a guest's second run starts warm, from its team's snapshot of the owner's setup.
    HANGAR_SNAPSHOT_TTL: '3600',
  });
});

after(async () => {
  await hangar?.stop();
  await anthropic.close();
  git.remove();
  if (configDirectory) fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** Team A's (the default team's) environment with the planted setup, shared with `guestTeamUid`. */
async function sharedEnvironment(guestTeamUid: string, setup = PLANT): Promise<string> {
  const created = await hangar.request('POST', '/api/v1/environments', {
    body: { name: `planted ${Math.random()}`, github_repos: [{ owner: 'acme', repo: 'app' }], setup_commands: setup },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const shared = await hangar.request('POST', `/api/v1/environments/${created.body.uid}/guests`, {
    body: { team_uid: guestTeamUid },
  });
  assert.equal(shared.status, 200, JSON.stringify(shared.body));
  return created.body.uid as string;
}

/** Waits for the run (of `apiKey`'s team) to end, bounded by the test's timeout. */
function ended(runId: string, apiKey: string): Promise<any> {
  return waitForStateAs(hangar, apiKey, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');
}

/** The run's conversation as text, as `apiKey`'s team reads it. */
async function conversationText(runId: string, apiKey: string): Promise<string> {
  const response = await hangar.request('GET', `/agent/runs/${runId}/conversation`, { apiKey });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return JSON.stringify(response.body);
}

/** Runs the git probe in the environment as `apiKey`'s team; its state and printed lines. */
async function probe(
  environmentId: string,
  apiKey: string,
): Promise<{ state: string; lines: string[]; path: string | undefined }> {
  const created = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'probe', config: { environment_id: environmentId, harness: { type: 'gitprobe' } } },
    apiKey,
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const run = await ended(created.body.run_id, apiKey);
  const link = await fetch(`${hangar.apiUrl}/agent/runs/${created.body.run_id}/transcript`, {
    headers: { authorization: `Bearer ${apiKey}` },
    redirect: 'manual',
  });
  const lines = link.status === 302 ? (await (await fetch(link.headers.get('location')!)).text()).split('\n') : [];
  assert.ok(lines.includes('PROBE-END'), `${run.state} ${JSON.stringify(run.status_message)}: ${lines.join('\n')}`);
  const timeline = await hangar.request('GET', `/agent/runs/${created.body.run_id}/timeline`, { apiKey });
  const done = JSON.stringify(timeline.body).match(/"environment_setup_done".*?"path":"(\w+)"/);
  return { state: run.state, lines, path: done?.[1] };
}

const ran = (lines: string[]) => lines.filter((line) => line.startsWith('HOOK-RAN:')).sort();

describe('a shared environment: what its owner runs in a guest team agent', {
  skip,
  timeout: 6 * RUN_TIMEOUT_MS,
}, () => {
  test("the owner's git settings run in the owner's own runs, and none of them in a guest team's agent", {
    timeout: 2 * RUN_TIMEOUT_MS,
  }, async () => {
    const guest = await hangar.createTeamWithUser({ teamName: 'guest-git' });
    const environmentId = await sharedEnvironment(guest.teamUid);

    // The owner keeps them (`pre-commit install` in setup is a real use): the fsmonitor of the clone and of
    // ~/.gitconfig, the filter and the hook all run, with the run's task token in their environment.
    const own = await probe(environmentId, hangar.apiKey);
    assert.equal(own.state, 'SUCCEEDED');
    assert.deepEqual(
      [...new Set(ran(own.lines))],
      [
        'HOOK-RAN:filter token=set',
        'HOOK-RAN:global token=set',
        'HOOK-RAN:local token=set',
        'HOOK-RAN:precommit token=set',
      ],
    );
    assert.ok(own.lines.includes('NAME:Setup Person'));

    // The guest's agent runs the same git commands after the same setup: nothing the owner planted runs, and what
    // setup put in ~/.gitconfig that runs nothing (user.name) is still there.
    const guestRun = await probe(environmentId, guest.apiKey);
    assert.equal(guestRun.state, 'SUCCEEDED');
    assert.deepEqual(ran(guestRun.lines), [], guestRun.lines.join('\n'));
    assert.ok(guestRun.lines.includes('NAME:Setup Person'), guestRun.lines.join('\n'));

    // The same from the guest team's setup snapshot (a warm start), and the owner's from its own.
    const warm = await probe(environmentId, guest.apiKey);
    assert.equal(warm.path, 'warm');
    assert.deepEqual(ran(warm.lines), [], warm.lines.join('\n'));
    const ownWarm = await probe(environmentId, hangar.apiKey);
    assert.equal(ownWarm.path, 'warm');
    assert.equal(new Set(ran(ownWarm.lines)).size, 4, ownWarm.lines.join('\n'));
  });

  test("a guest's failed setup keeps no debug window (its agent would work in the owner's setup as it was left)", {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const guest = await hangar.createTeamWithUser({ teamName: 'guest-debug' });
    const created = await hangar.request('POST', '/api/v1/environments', {
      body: { name: `failing ${Math.random()}`, setup_commands: ['exit 3'], failure_session_retention_minutes: 5 },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const environmentId = created.body.uid as string;
    const shared = await hangar.request('POST', `/api/v1/environments/${environmentId}/guests`, {
      body: { team_uid: guest.teamUid },
    });
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    const start = async (apiKey: string) => {
      const run = await hangar.request('POST', '/agent/runs', {
        body: { prompt: 'x', config: { environment_id: environmentId, harness: { type: 'gitprobe' } } },
        apiKey,
      });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      return ended(run.body.run_id, apiKey);
    };
    const own = await start(hangar.apiKey);
    assert.equal(own.state, 'FAILED');
    assert.ok(own.status_message.session_debug_until, JSON.stringify(own.status_message));
    const guestRun = await start(guest.apiKey);
    assert.equal(guestRun.state, 'FAILED');
    assert.equal(guestRun.status_message.error_code, 'environment_setup_failed');
    assert.equal(guestRun.status_message.session_debug_until, undefined, JSON.stringify(guestRun.status_message));
  });

  test("a guest team's secrets go into a run in the shared environment only once its admin allowed that environment", {
    timeout: 2 * RUN_TIMEOUT_MS,
  }, async () => {
    const guest = await hangar.createTeamWithUser({ teamName: 'guest-secrets' });
    const member = await hangar.addUser(guest.teamUid, 'member');
    const environmentId = await sharedEnvironment(guest.teamUid, ['true']);
    assert.equal(
      (
        await hangar.request('POST', '/api/v1/secrets', {
          body: { name: 'B_TICKETS', value: B_SECRET_VALUE },
          apiKey: guest.apiKey,
        })
      ).status,
      201,
    );
    const server = await hangar.request('POST', '/api/v1/mcp-servers', {
      body: {
        name: 'tickets',
        command: process.execPath,
        args: [TICKETS_SERVER],
        env: { TICKETS_LABEL: { secret: 'B_TICKETS' } },
      },
      apiKey: guest.apiKey,
    });
    assert.equal(server.status, 201, JSON.stringify(server.body));
    const body = {
      prompt: 'look up T-1',
      config: {
        environment_id: environmentId,
        harness: { type: 'oz' },
        mcp_servers: { tickets: { warp_id: server.body.uid } },
      },
    };

    // Without consent the run naming B's MCP server (and so B's secret) is refused, even for B's admin.
    const refused = await hangar.request('POST', '/agent/runs', { body, apiKey: guest.apiKey });
    if (refused.status === 200) {
      await ended(refused.body.run_id, guest.apiKey);
      const leaked = (await conversationText(refused.body.run_id, guest.apiKey)).includes('REDACTED:B_TICKETS');
      assert.fail(`the run was created without consent${leaked ? ' and its MCP server got the secret' : ''}`);
    }
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /environments\/[A-Za-z0-9]{22}\/trust/);

    // Consent is the guest admins' alone: not a member's, not the owner's (its own environment needs none).
    const trust = `/api/v1/environments/${environmentId}/trust`;
    assert.equal((await hangar.request('POST', trust, { apiKey: member.apiKey })).status, 403);
    assert.equal((await hangar.request('POST', trust)).status, 400);
    const before = await hangar.request('GET', trust, { apiKey: guest.apiKey });
    assert.deepEqual(
      { ...before.body },
      { environment_uid: environmentId, owner_team_uid: hangar.teamUid, secrets_allowed: false },
    );
    const allowed = await hangar.request('POST', trust, { apiKey: guest.apiKey });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal(allowed.body.secrets_allowed, true);
    assert.equal(allowed.body.allowed_by, guest.userUid);

    // With it, the run gets B's secret (its MCP server returned it, stored redacted).
    anthropic.script({ toolCalls: [{ name: 'tickets__lookup_ticket', input: { id: 'T-1' } }] }, { text: 'done' });
    const run = await hangar.request('POST', '/agent/runs', { body, apiKey: guest.apiKey });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const done = await ended(run.body.run_id, guest.apiKey);
    assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done.status_message));
    const conversation = await conversationText(run.body.run_id, guest.apiKey);
    assert.ok(conversation.includes('[REDACTED:B_TICKETS]'), conversation);

    // A run created with the consent that waits in the queue while it is taken back starts without B's secret:
    // it fails before its harness (and so its MCP server) starts.
    const waiter = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'hold', config: { environment_id: environmentId, harness: { type: 'waiter' } } },
      apiKey: guest.apiKey,
    });
    assert.equal(waiter.status, 200, JSON.stringify(waiter.body));
    const waiting = path.join(hangar.workspaceDir, `${waiter.body.run_id}.1`);
    // A file the harness writes in its workspace: no event tells of it.
    while (!fs.existsSync(path.join(waiting, 'waiting'))) await new Promise((resolve) => setTimeout(resolve, 100));
    const queued = await hangar.request('POST', '/agent/runs', { body, apiKey: guest.apiKey });
    assert.equal(queued.status, 200, JSON.stringify(queued.body));
    assert.equal((await hangar.request('DELETE', trust, { apiKey: guest.apiKey })).status, 204);
    fs.writeFileSync(path.join(waiting, 'go'), '');
    assert.equal((await ended(waiter.body.run_id, guest.apiKey)).state, 'SUCCEEDED');
    const late = await ended(queued.body.run_id, guest.apiKey);
    assert.equal(late.state, 'FAILED', JSON.stringify(late));
    assert.equal(late.status_message.error_code, 'not_authorized');
    assert.match(late.status_message.message, /\/environments\/[A-Za-z0-9]{22}\/trust/);
    assert.equal(late.started_at ?? null, null, 'its agent never started');

    // Taken back, the refusal is back; a run that names no secret still runs in the environment.
    assert.equal((await hangar.request('POST', '/agent/runs', { body, apiKey: guest.apiKey })).status, 403);
    const plain = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', config: { environment_id: environmentId, harness: { type: 'gitprobe' } } },
      apiKey: guest.apiKey,
    });
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.equal((await ended(plain.body.run_id, guest.apiKey)).state, 'SUCCEEDED');

    // Both decisions are in the guest team's audit log.
    const audit = await hangar.request('GET', '/api/v1/audit', { apiKey: guest.apiKey });
    const actions = (audit.body?.entries ?? []).map((entry: { action: string }) => entry.action);
    assert.ok(actions.includes('environment.allow_secrets'), JSON.stringify(audit.body));
    assert.ok(actions.includes('environment.disallow_secrets'), JSON.stringify(audit.body));
  });
});
