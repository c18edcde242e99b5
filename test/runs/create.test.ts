import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GitFixtures, skillFile } from '../support/git.js';
import { addAgentIdentity, addEnvironment, addEnvironmentWithRepos, createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
const git = new GitFixtures();
before(async () => {
  git.createRepo('acme', 'tools', {
    'skills/deploy/SKILL.md': skillFile('deploy', 'Ships a release', 'Deploy with care.'),
    '.claude/skills/review/SKILL.md': skillFile('review', 'Reviews a change', 'Review the diff.'),
  });
  // API only: the runs stay QUEUED for these tests to look at.
  hangar = await startTestServer({ HANGAR_GIT_BASE_URL: git.baseUrl, ANTHROPIC_API_KEY: 'test-key' }, { role: 'api' });
  await addEnvironmentWithRepos(hangar, ['acme/tools']);
});
after(async () => {
  await hangar.stop();
  git.remove();
});

describe('POST /agent/runs', () => {
  test('creates a queued run and answers with its id', async () => {
    const response = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'Fix the flaky test\nDetails follow' },
    });
    assert.equal(response.status, 200);
    assert.match(response.body.run_id, /^[0-9a-f-]{36}$/);
    assert.equal(response.body.task_id, response.body.run_id);
    assert.equal(response.body.state, 'QUEUED');
    const run = await hangar.request('GET', `/agent/runs/${response.body.run_id}`);
    assert.equal(run.status, 200);
    assert.equal(run.body.title, 'Fix the flaky test');
    assert.equal(run.body.prompt, 'Fix the flaky test\nDetails follow');
    assert.equal(run.body.state, 'QUEUED');
    assert.equal(run.body.source, 'API');
    assert.equal(run.body.execution_location, 'REMOTE');
    assert.deepEqual(run.body.creator, { type: 'user', uid: hangar.userUid, display_name: 'Admin' });
    assert.deepEqual(run.body.executor, run.body.creator);
    assert.deepEqual(run.body.scope, { type: 'Team', uid: hangar.teamUid });
    assert.equal(run.body.is_run_type_cancellable, true);
    assert.equal(run.body.is_sandbox_running, false);
    assert.deepEqual(run.body.artifacts, []);
    assert.match(run.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  test('keeps the title, config, skill and metadata it was given', async () => {
    const id = await createRun(hangar, {
      title: 'Custom title',
      config: { name: 'nightly', model_id: 'claude-sonnet-4', harness: { type: 'claude' }, idle_timeout_minutes: 5 },
      skill: 'acme/tools:skills/deploy/SKILL.md',
      metadata: { ticket: 'ENG-1', 'env.name': 'prod' },
      mode: 'plan',
    });
    const run = (await hangar.request('GET', `/agent/runs/${id}`)).body;
    assert.equal(run.title, 'Custom title');
    assert.equal(run.agent_config.name, 'nightly');
    assert.equal(run.agent_config.model_id, 'claude-sonnet-4');
    assert.equal(run.agent_config.skill_spec, 'acme/tools:skills/deploy/SKILL.md');
    assert.equal(run.agent_config.base_prompt.trim(), 'Deploy with care.', "the skill's body is the base prompt");
    assert.deepEqual(run.agent_skill, {
      name: 'deploy',
      description: 'Ships a release',
      full_path: 'skills/deploy/SKILL.md',
    });
    assert.deepEqual(run.metadata, { ticket: 'ENG-1', 'env.name': 'prod' });
  });

  test('a skill wins over config.skill_spec, resolves short specs and makes the prompt optional', async () => {
    const id = await createRun(hangar, {
      prompt: undefined,
      skill: 'tools:review',
      config: { skill_spec: 'tools:deploy', base_prompt: 'Mine' },
    });
    const run = (await hangar.request('GET', `/agent/runs/${id}`)).body;
    assert.equal(run.agent_config.skill_spec, 'acme/tools:.claude/skills/review/SKILL.md');
    assert.equal(run.agent_config.base_prompt, 'Mine', 'an explicit base prompt is kept');
    assert.equal(run.agent_skill.name, 'review');
    assert.equal(run.prompt, '');
    assert.equal(run.title, 'Run skill review');
    const viaConfig = await createRun(hangar, { config: { skill_spec: 'acme/tools:deploy' } });
    assert.equal(
      (await hangar.request('GET', `/agent/runs/${viaConfig}`)).body.agent_skill.full_path,
      'skills/deploy/SKILL.md',
    );
  });

  test('an unknown skill is 400', async () => {
    for (const skill of ['tools:nope', 'acme/elsewhere:deploy', 'other:deploy']) {
      const response = await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', skill } });
      assert.equal(response.status, 400, skill);
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, /skill/);
    }
  });

  test('rejects a request without a prompt or skill', async () => {
    for (const body of [{}, { prompt: '' }, { prompt: '   ' }, { title: 'only a title' }]) {
      const response = await hangar.request('POST', '/agent/runs', { body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, /prompt/);
    }
  });

  test('rejects invalid config with 400 naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ prompt: 'x', config: { idle_timeout_minutes: 0 } }, /idle_timeout_minutes/],
      [{ prompt: 'x', config: { idle_timeout_minutes: 61 } }, /idle_timeout_minutes/],
      [{ prompt: 'x', config: { harness: { type: 'cursor' } } }, /harness/],
      [{ prompt: 'x', config: { model_id: 5 } }, /model_id/],
      [{ prompt: 'x', config: { mcp_servers: { a: { command: 'x', url: 'http://y' } } } }, /mcp_servers\.a/],
      [{ prompt: 'x', config: { mcp_servers: { a: { url: 'not a url' } } } }, /mcp_servers\.a\.url/],
      [{ prompt: 'x', config: { environment_id: 'short' } }, /environment_id/],
      [{ prompt: 'x', config: { skills: ['a:b'], skill_spec: 'c:d' } }, /skills/],
      [{ prompt: 'x', skill: 'no colon here' }, /skill/],
      [{ prompt: 'x', mode: 'turbo' }, /mode/],
      [{ prompt: 5 }, /prompt/],
      [
        { prompt: 'x', attachments: Array.from({ length: 6 }, () => ({ mime_type: 'image/png', data: 'AAAA' })) },
        /attachments/,
      ],
      [{ prompt: 'x', attachments: [{ mime_type: 'image/png', data: '***' }] }, /base64/],
      ['[1,2]', /body/],
    ];
    for (const [body, detail] of cases) {
      const response = await hangar.request('POST', '/agent/runs', { body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, detail, JSON.stringify(body));
    }
  });

  test('enforces the metadata rules', async () => {
    const bad: Record<string, string>[] = [
      { 'bad key': 'v' },
      { ['k'.repeat(65)]: 'v' },
      { k: 'v'.repeat(257) },
      { k: 'nul\0' },
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
    ];
    for (const metadata of bad) {
      const response = await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', metadata } });
      assert.equal(response.status, 400, JSON.stringify(metadata).slice(0, 80));
      assert.match(response.body.detail, /metadata/);
    }
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'é'.repeat(128)]));
    assert.equal(
      (await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', metadata: twenty } })).status,
      200,
    );
    const nonString = await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', metadata: { k: 1 } } });
    assert.equal(nonString.status, 400);
  });

  test('a child run inherits its parent metadata, its own keys winning', async () => {
    const parent = await createRun(hangar, { metadata: { team: 'core', ticket: 'ENG-1' } });
    const child = await createRun(hangar, { parent_run_id: parent, metadata: { ticket: 'ENG-2' } });
    const run = (await hangar.request('GET', `/agent/runs/${child}`)).body;
    assert.equal(run.parent_run_id, parent);
    assert.deepEqual(run.metadata, { team: 'core', ticket: 'ENG-2' });
    const missing = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', parent_run_id: '00000000-0000-0000-0000-000000000000' },
    });
    assert.equal(missing.status, 400);
  });

  test('an environment of the team is accepted; an unknown or foreign one is 403', async () => {
    const own = await addEnvironment(hangar);
    const id = await createRun(hangar, { config: { environment_id: own } });
    assert.equal((await hangar.request('GET', `/agent/runs/${id}`)).body.agent_config.environment_id, own);
    const other = await hangar.createTeamWithUser();
    const foreign = await addEnvironment(hangar, other.teamUid);
    for (const environmentId of [foreign, 'AAAAAAAAAAAAAAAAAAAAAA']) {
      const response = await hangar.request('POST', '/agent/runs', {
        body: { prompt: 'x', config: { environment_id: environmentId } },
      });
      assert.equal(response.status, 403);
      assert.equal(response.body.error_code, 'not_authorized');
    }
    const shared = await hangar.request('POST', '/agent/runs', {
      body: { prompt: 'x', config: { mcp_servers: { s: { warp_id: 'abc' } } } },
    });
    assert.equal(shared.status, 403);
  });

  test('an agent identity of the team becomes the executor', async () => {
    const agent = await addAgentIdentity(hangar);
    const id = await createRun(hangar, { agent_identity_uid: agent });
    const run = (await hangar.request('GET', `/agent/runs/${id}`)).body;
    assert.deepEqual(run.executor, { type: 'service_account', uid: agent, display_name: 'Release bot' });
    assert.equal(run.creator.uid, hangar.userUid);
    const other = await hangar.createTeamWithUser();
    const foreign = await addAgentIdentity(hangar, other.teamUid);
    assert.equal(
      (await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', agent_identity_uid: foreign } })).status,
      403,
    );
  });

  test('self-hosted worker runs are marked as not cancellable here', async () => {
    const id = await createRun(hangar, { config: { worker_host: 'build-box-1' } });
    assert.equal((await hangar.request('GET', `/agent/runs/${id}`)).body.is_run_type_cancellable, false);
    const hosted = await createRun(hangar, { config: { worker_host: 'warp' } });
    assert.equal((await hangar.request('GET', `/agent/runs/${hosted}`)).body.is_run_type_cancellable, true);
  });

  test('personal runs are visible to their creator only', async () => {
    const colleague = await hangar.addUser(hangar.teamUid, 'member');
    const personal = await createRun(hangar, { team: false });
    const run = (await hangar.request('GET', `/agent/runs/${personal}`)).body;
    assert.deepEqual(run.scope, { type: 'User', uid: hangar.userUid });
    assert.equal((await hangar.request('GET', `/agent/runs/${personal}`, { apiKey: colleague.apiKey })).status, 404);
    const teamRun = await createRun(hangar);
    assert.equal((await hangar.request('GET', `/agent/runs/${teamRun}`, { apiKey: colleague.apiKey })).status, 200);
  });

  test('attachments and images are accepted', async () => {
    const data = Buffer.from('png bytes').toString('base64');
    const id = await createRun(hangar, {
      attachments: [{ file_name: 'a.png', mime_type: 'image/png', data }],
      images: [{ mime_type: 'image/jpeg', data }],
    });
    const stored = await hangar.db
      .selectFrom('run_attachments')
      .selectAll()
      .where('run_id', '=', id)
      .orderBy('position')
      .execute();
    assert.deepEqual(
      stored.map((row) => [row.file_name, row.mime_type, Buffer.from(row.data).toString()]),
      [
        ['a.png', 'image/png', 'png bytes'],
        ['attachment-2', 'image/jpeg', 'png bytes'],
      ],
    );
  });

  test('a conversation id must belong to a visible run', async () => {
    const response = await hangar.request('POST', '/agent/runs', { body: { prompt: 'x', conversation_id: 'nope' } });
    assert.equal(response.status, 400);
    assert.match(response.body.detail, /conversation/);
  });

  test('the deprecated POST /agent/run behaves the same and says it is deprecated', async () => {
    const response = await hangar.request('POST', '/agent/run', { body: { prompt: 'old client' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('deprecation'), 'true');
    assert.match(response.headers.get('link') ?? '', /\/api\/v1\/agent\/runs/);
    assert.equal(response.body.state, 'QUEUED');
    assert.equal((await hangar.request('POST', '/agent/run', { body: {} })).status, 400);
  });

  test('the creation is on the timeline', async () => {
    const id = await createRun(hangar);
    const timeline = await hangar.request('GET', `/agent/runs/${id}/timeline`);
    assert.equal(timeline.status, 200);
    assert.equal(timeline.body.events.length, 1);
    assert.equal(timeline.body.events[0].event_type, 'oz_run_created');
    assert.equal(timeline.body.events[0].run_id, id);
    assert.match(timeline.body.events[0].event_uuid, /^[0-9a-f-]{36}$/);
  });

  test('an unknown run is 404', async () => {
    for (const path of ['/agent/runs/00000000-0000-0000-0000-000000000000', '/agent/runs/nope/timeline']) {
      const response = await hangar.request('GET', path);
      assert.equal(response.status, 404);
      assert.equal(response.body.error_code, 'resource_not_found');
    }
  });
});
