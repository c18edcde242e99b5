import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { deliver } from '../support/webhooks.js';

let hangar: TestServer;
before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
  for (const [name, value] of [
    ['GH_SECRET', 'gh-signing-secret'],
    ['ALERTS_TOKEN', 'alerts-token-value'],
  ]) {
    assert.equal((await hangar.request('POST', '/api/v1/secrets', { body: { name, value } })).status, 201);
  }
});
after(() => hangar.stop());

const cli = (args: string[]) => hangarCli(['factory', ...args], { url: hangar.url, apiKey: hangar.apiKey });

/** Writes a definition directory from path -> content. */
function directory(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-factory-'));
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), content);
  }
  return root;
}

const automation = (webhookUid: string, extra = '') =>
  [
    '---',
    'agent: triager',
    'triggers:',
    '  - provider: webhook',
    '    event: received',
    '    filter:',
    `      webhook_ids: [${webhookUid}]`,
    '      payload: { action: [opened] }',
    extra,
    '---',
    'Triage it.',
    '',
  ].join('\n');

const base: Record<string, string> = {
  'factory.yaml': 'name: triage\ndescription: Issue triage\n',
  'webhooks/github.yaml': 'authMode: signature\nsignatureScheme: github\nsecretName: GH_SECRET\n',
  'webhooks/alerts.yaml': 'secretName: ALERTS_TOKEN\n',
  'agents/triager/agent.md': '---\ndescription: Labels issues\nskills: [labeling]\n---\nYou are careful.\n',
  'skills/labeling/SKILL.md': '---\nname: labeling\ndescription: How we label issues\n---\nUse bug for crashes.\n',
};

describe('factory definitions', () => {
  test('plan changes nothing; apply creates; a second apply changes nothing and keeps UIDs', async () => {
    const root = directory(base);
    const plan = await cli(['plan', root, '--json']);
    assert.equal(plan.code, 0, plan.stderr);
    const planned = JSON.parse(plan.stdout);
    assert.equal(planned.applied, false);
    assert.equal(planned.factory.uid, null);
    assert.deepEqual(
      planned.changes.map((change: { kind: string; action: string }) => `${change.action} ${change.kind}`).sort(),
      ['create agent', 'create factory', 'create skill', 'create webhook', 'create webhook'],
    );
    assert.deepEqual(
      (await hangar.request('GET', '/api/v1/factory/factories')).body.factories.map(
        (factory: { name: string }) => factory.name,
      ),
      ['default'],
    );

    const applied = await cli(['apply', root]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /^\+ webhook +github +[A-Za-z0-9]{22}$/m);
    const webhooks = (await hangar.request('GET', '/api/v1/factory/webhooks')).body.webhooks;
    const github = webhooks.find((webhook: { name: string }) => webhook.name === 'github');
    assert.equal(github.secret_name, 'GH_SECRET');
    assert.equal(github.signature_scheme, 'github');

    const again = JSON.parse((await cli(['apply', root, '--json'])).stdout);
    assert.ok(
      again.changes.every((change: { action: string }) => change.action === 'unchanged'),
      JSON.stringify(again.changes),
    );
    assert.equal(again.changes.find((change: { name: string }) => change.name === 'github').uid, github.uid);

    // Automations take webhook UIDs, which the first apply printed.
    const withAutomation = directory({ ...base, 'automations/triage/automation.md': automation(github.uid) });
    const third = JSON.parse((await cli(['apply', withAutomation, '--json'])).stdout);
    const created = third.changes.find((change: { kind: string }) => change.kind === 'automation');
    assert.equal(created.action, 'create');
    const saved = (await hangar.request('GET', `/api/v1/factory/automations/${created.uid}`)).body;
    assert.equal(saved.prompt, 'Triage it.');
    assert.deepEqual(saved.triggers[0].filter, { webhook_ids: [github.uid], payload: { action: ['opened'] } });
    const agents = (await hangar.request('GET', '/api/v1/agent/identities')).body.agents;
    const triager = agents.find((agent: { name: string }) => agent.name === 'triager');
    assert.equal(saved.agent_uid, triager.uid);
    assert.deepEqual(triager.skills, ['triage:skills/labeling/SKILL.md']);
    const fourth = JSON.parse((await cli(['apply', withAutomation, '--json'])).stdout);
    assert.ok(
      fourth.changes.every((change: { action: string }) => change.action === 'unchanged'),
      JSON.stringify(fourth.changes),
    );

    // The managed webhook works with its team secret.
    const body = '{"action":"opened"}';
    const { createHmac } = await import('node:crypto');
    const signature = `sha256=${createHmac('sha256', 'gh-signing-secret').update(body).digest('hex')}`;
    assert.equal((await deliver(github.url, body, { 'x-hub-signature-256': signature })).status, 202);

    // The factory's skill is listed and usable as a skill spec.
    const skills = (await hangar.request('GET', '/api/v1/agent')).body.agents;
    assert.ok(
      skills.some(
        (skill: { name: string; variants: Array<{ id: string }> }) =>
          skill.name === 'labeling' && skill.variants[0]!.id === 'triage:skills/labeling/SKILL.md',
      ),
    );
    const run = await hangar.request('POST', '/api/v1/agent/runs', { body: { skill: 'triage:labeling' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const stored = (await hangar.request('GET', `/api/v1/agent/runs/${run.body.run_id}`)).body;
    assert.equal(stored.agent_skill.name, 'labeling');
  });

  test('a renamed file is a delete plus a create; a changed file is an update naming its fields', async () => {
    const root = directory({ ...base, 'factory.yaml': 'name: renames\n' });
    assert.equal((await cli(['apply', root])).code, 0);
    fs.renameSync(path.join(root, 'webhooks/alerts.yaml'), path.join(root, 'webhooks/pager.yaml'));
    fs.writeFileSync(
      path.join(root, 'webhooks/github.yaml'),
      'authMode: signature\nsignatureScheme: github\nsecretName: GH_SECRET\nenabled: false\n',
    );
    const result = JSON.parse((await cli(['apply', root, '--json'])).stdout);
    const actions = Object.fromEntries(
      result.changes
        .filter((change: { kind: string }) => change.kind === 'webhook')
        .map((change: { name: string; action: string; fields?: string[] }) => [
          change.name,
          [change.action, change.fields],
        ]),
    );
    assert.deepEqual(actions, {
      github: ['update', ['enabled']],
      pager: ['create', undefined],
      alerts: ['delete', undefined],
    });
  });

  test('runners/<name>.yaml: created, named by agents as their default, updated, refused, deleted', async () => {
    const files = {
      'factory.yaml': 'name: shaped\n',
      'runners/small.yaml': 'description: Few resources\nlimits:\n  cpus: 0.5\n  memory: 256m\n',
      'agents/worker/agent.md': '---\nrunner: small\n---\nWork.\n',
    };
    const root = directory(files);
    const planned = JSON.parse((await cli(['plan', root, '--json'])).stdout);
    assert.deepEqual(
      planned.changes.find((change: { kind: string }) => change.kind === 'runner'),
      { kind: 'runner', name: 'small', action: 'create', uid: null },
    );
    assert.equal((await hangar.request('GET', '/api/v1/runners')).body.runners.length, 0, 'a plan creates nothing');
    const applied = await cli(['apply', root, '--json']);
    assert.equal(applied.code, 0, applied.stderr);
    const changes = JSON.parse(applied.stdout).changes as Array<{ kind: string; name: string; uid: string }>;
    const runnerUid = changes.find((change) => change.kind === 'runner')!.uid;
    const agentUid = changes.find((change) => change.kind === 'agent')!.uid;
    const runner = (await hangar.request('GET', `/api/v1/runners/${runnerUid}`)).body;
    assert.deepEqual(
      { name: runner.name, description: runner.description, limits: runner.limits, factory: !!runner.factory_uid },
      { name: 'small', description: 'Few resources', limits: { cpus: 0.5, memory: '256m' }, factory: true },
    );
    const agent = (await hangar.request('GET', `/agent/identities/${agentUid}`)).body;
    assert.equal(agent.default_runner_uid, runnerUid);

    // Unchanged on a second apply; an edit is an update naming its field and keeps the UID.
    const again = JSON.parse((await cli(['apply', root, '--json'])).stdout).changes;
    assert.equal(again.find((change: { kind: string }) => change.kind === 'runner').action, 'unchanged');
    fs.writeFileSync(path.join(root, 'runners/small.yaml'), 'description: Few resources\nlimits:\n  cpus: 1\n');
    const edited = JSON.parse((await cli(['apply', root, '--json'])).stdout).changes;
    assert.deepEqual(
      edited.find((change: { kind: string }) => change.kind === 'runner'),
      {
        kind: 'runner',
        name: 'small',
        action: 'update',
        uid: runnerUid,
        fields: ['limits'],
      },
    );

    // What the server refuses is an error of the file, and nothing changes.
    fs.writeFileSync(path.join(root, 'runners/small.yaml'), 'limits:\n  cpus: 100000\n  speed: fast\n');
    const refused = await cli(['plan', root]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /runners\/small\.yaml:3: Unknown key "speed" in limits/);
    fs.writeFileSync(path.join(root, 'runners/small.yaml'), 'limits:\n  cpus: 1000\n');
    const tooBig = await cli(['apply', root]);
    assert.notEqual(tooBig.code, 0);
    assert.match(tooBig.stderr, /runners\/small\.yaml: .*HANGAR_RUN_CPUS_MAX/);
    assert.equal((await hangar.request('GET', `/api/v1/runners/${runnerUid}`)).body.limits.cpus, 1);

    // An agent naming a runner the definition lacks, and a name a hand-made runner holds, are errors too.
    fs.writeFileSync(path.join(root, 'agents/worker/agent.md'), '---\nrunner: large\n---\nWork.\n');
    assert.match((await cli(['plan', root])).stderr, /agents\/worker\/agent\.md:2: Runner "large" is not defined/);
    const handMade = await hangar.request('POST', '/api/v1/runners', { body: { name: 'taken' } });
    assert.equal(handMade.status, 201);
    const clash = directory({ 'factory.yaml': 'name: clash\n', 'runners/taken.yaml': 'description: mine\n' });
    assert.match((await cli(['apply', clash])).stderr, /runners\/taken\.yaml: .*already has a runner named taken/);

    // Gone from the files, gone from the team.
    fs.rmSync(path.join(root, 'runners'), { recursive: true });
    fs.writeFileSync(path.join(root, 'agents/worker/agent.md'), '---\ndescription: plain\n---\nWork.\n');
    const removed = JSON.parse((await cli(['apply', root, '--json'])).stdout).changes;
    assert.equal(removed.find((change: { kind: string }) => change.kind === 'runner').action, 'delete');
    assert.equal((await hangar.request('GET', `/api/v1/runners/${runnerUid}`)).status, 404);
    assert.equal((await hangar.request('GET', `/agent/identities/${agentUid}`)).body.default_runner_uid, '');
  });

  test('a definition with problems changes nothing and names every file and line', async () => {
    const root = directory({
      ...base,
      'factory.yaml': 'name: broken\n',
      'webhooks/github.yaml': 'authMode: signature\nsignatureScheme: github\nsecretName: NO_SUCH_SECRET\n',
      'automations/bad/automation.md': automation('AAAAAAAAAAAAAAAAAAAAAA'),
      'webhooks/typo.yaml': 'secretName: ALERTS_TOKEN\nenabeld: true\n',
    });
    const result = await cli(['apply', root]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /webhooks\/typo\.yaml:2: .*enabeld/);
    const api = await hangar.request('POST', '/api/v1/factory/definitions/apply', {
      body: {
        files: {
          'factory.yaml': 'name: broken\n',
          'webhooks/github.yaml': 'authMode: signature\nsignatureScheme: github\nsecretName: NO_SUCH_SECRET\n',
          'automations/bad/automation.md': automation('AAAAAAAAAAAAAAAAAAAAAA').replace('agent: triager\n', ''),
        },
      },
    });
    assert.equal(api.status, 400);
    const errors = api.body.errors.map((error: { file: string; line: number | null }) => `${error.file}:${error.line}`);
    assert.ok(errors.includes('webhooks/github.yaml:3'), JSON.stringify(api.body.errors));
    assert.ok(
      api.body.errors.some(
        (error: { file: string; message: string }) =>
          error.file === 'automations/bad/automation.md' && /UIDs, not names/.test(error.message),
      ),
      JSON.stringify(api.body.errors),
    );
    assert.ok(
      !(await hangar.request('GET', '/api/v1/factory/factories')).body.factories.some(
        (factory: { name: string }) => factory.name === 'broken',
      ),
    );
  });

  test('plan reports every problem in one answer: the files, the secrets, and what saving would refuse', async () => {
    // Issue 26 item 7: each of these used to surface only after the one before it was fixed.
    const root = directory({
      ...base,
      'factory.yaml': 'name: all-at-once\n',
      // A typo in a file (found by parsing).
      'webhooks/typo.yaml': 'secretName: ALERTS_TOKEN\nenabeld: true\n',
      // A secret that does not exist (found in the database, for a file without errors of its own).
      'webhooks/github.yaml': 'authMode: signature\nsignatureScheme: github\nsecretName: NO_SUCH_SECRET\n',
      // An environment this team cannot use (found only when the agent is saved).
      'agents/triager/agent.md': '---\nenvironment: no-such-environment\nskills: [labeling]\n---\nCareful.\n',
    });
    const result = await cli(['plan', root]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /webhooks\/typo\.yaml:2: .*enabeld/);
    assert.match(result.stderr, /webhooks\/github\.yaml:3: .*NO_SUCH_SECRET/);
    assert.match(result.stderr, /agents\/triager\/agent\.md: .*no-such-environment/);
    assert.match(result.stderr, /^3 problem\(s\); nothing was changed\.$/m);
    assert.ok(
      !(await hangar.request('GET', '/api/v1/factory/factories')).body.factories.some(
        (factory: { name: string }) => factory.name === 'all-at-once',
      ),
    );
  });

  test('applying needs the team admin role', async () => {
    const member = await hangar.addUser(hangar.teamUid, 'member');
    const response = await hangar.request('POST', '/api/v1/factory/definitions/plan', {
      apiKey: member.apiKey,
      body: { files: base },
    });
    assert.equal(response.status, 403);
  });
});
