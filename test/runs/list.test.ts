import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GitFixtures, skillFile } from '../support/git.js';
import {
  addAgentIdentity,
  addArtifact,
  addEnvironment,
  addEnvironmentWithRepos,
  createRun,
  setRunColumns,
} from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
const git = new GitFixtures();
const ids: Record<string, string> = {};

async function list(query: string, apiKey?: string) {
  return hangar.request('GET', `/agent/runs?${query}`, { apiKey });
}

async function listIds(query: string): Promise<string[]> {
  const response = await list(query);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.runs.map((run: { run_id: string }) => run.run_id);
}

function sameSet(actual: string[], expected: string[]) {
  assert.deepEqual([...actual].sort(), [...expected].sort());
}

before(async () => {
  git.createRepo('acme', 'ops', { 'skills/deploy/SKILL.md': skillFile('deploy', 'Deploys') });
  hangar = await startTestServer({ HANGAR_GIT_BASE_URL: git.baseUrl });
  // The skill's repository is reachable through an environment no run below names.
  await addEnvironmentWithRepos(hangar, ['acme/ops']);
  const environment = await addEnvironment(hangar);
  const agent = await addAgentIdentity(hangar);
  ids.plain = await createRun(hangar, { prompt: 'Refactor the billing module', title: 'Billing refactor' });
  ids.skill = await createRun(hangar, {
    prompt: 'Deploy',
    skill: 'acme/ops:skills/deploy/SKILL.md',
    config: { name: 'deployer', model_id: 'claude-x' },
  });
  ids.env = await createRun(hangar, { prompt: 'Environment run', config: { environment_id: environment } });
  ids.meta = await createRun(hangar, { prompt: 'Metadata run', metadata: { ticket: 'ENG-7', stage: 'prod' } });
  ids.child = await createRun(hangar, { prompt: 'Child run', parent_run_id: ids.meta, metadata: { stage: 'dev' } });
  ids.grandchild = await createRun(hangar, { prompt: 'Grandchild run', parent_run_id: ids.child });
  ids.agent = await createRun(hangar, { prompt: 'Agent run', agent_identity_uid: agent, title: 'Zebra title' });
  ids.environment = environment;
  ids.agentUid = agent;
  await setRunColumns(hangar, ids.plain, { state: 'SUCCEEDED' });
  await setRunColumns(hangar, ids.skill, { state: 'FAILED', source: 'SCHEDULED_AGENT', schedule_id: 'sched-1' });
  await setRunColumns(hangar, ids.env, { execution_location: 'LOCAL', source: 'LOCAL' });
  await addArtifact(hangar, ids.plain, 'PULL_REQUEST');
  await addArtifact(hangar, ids.env, 'PLAN');
});
after(async () => {
  await hangar.stop();
  git.remove();
});

describe('GET /agent/runs filters', () => {
  test('lists every run of the team by default, newest update first', async () => {
    const response = await list('');
    assert.equal(response.body.runs.length, 7);
    assert.equal(response.body.page_info.has_next_page, false);
    assert.equal(response.body.page_info.next_cursor, undefined);
    const updated = response.body.runs.map((run: { updated_at: string }) => run.updated_at);
    assert.deepEqual(updated, [...updated].sort().reverse());
  });

  test('state is repeatable and matches any', async () => {
    sameSet(await listIds('state=SUCCEEDED'), [ids.plain!]);
    sameSet(await listIds('state=SUCCEEDED&state=FAILED'), [ids.plain!, ids.skill!]);
    assert.equal((await list('state=NOPE')).status, 400);
  });

  test('name, model, creator, executor, source and location', async () => {
    sameSet(await listIds('name=deployer'), [ids.skill!]);
    sameSet(await listIds('model_id=claude-x'), [ids.skill!]);
    assert.equal((await listIds(`creator=${hangar.userUid}`)).length, 7);
    sameSet(await listIds(`executor=${ids.agentUid}`), [ids.agent!]);
    sameSet(await listIds('source=SCHEDULED_AGENT'), [ids.skill!]);
    sameSet(await listIds('execution_location=LOCAL'), [ids.env!]);
    assert.equal((await listIds('execution_location=REMOTE')).length, 6);
    assert.equal((await list('source=CARRIER_PIGEON')).status, 400);
  });

  test('environment, with empty-environment for runs without one', async () => {
    sameSet(await listIds(`environment_id=${ids.environment}`), [ids.env!]);
    assert.equal((await listIds('environment_id=empty-environment')).length, 6);
  });

  test('skill and its alias skill_spec', async () => {
    sameSet(await listIds('skill=acme/ops:skills/deploy/SKILL.md'), [ids.skill!]);
    sameSet(await listIds('skill_spec=acme/ops:skills/deploy/SKILL.md'), [ids.skill!]);
    assert.equal((await list('skill=a:b&skill_spec=c:d')).status, 400);
  });

  test('schedule and artifact type', async () => {
    sameSet(await listIds('schedule_id=sched-1'), [ids.skill!]);
    sameSet(await listIds('artifact_type=PULL_REQUEST'), [ids.plain!]);
    sameSet(await listIds('artifact_type=PLAN'), [ids.env!]);
    assert.deepEqual(await listIds('artifact_type=SCREENSHOT'), []);
    assert.equal((await list('artifact_type=VIDEO')).status, 400);
    const run = (await hangar.request('GET', `/agent/runs/${ids.plain}`)).body;
    assert.equal(run.artifacts.length, 1);
    assert.equal(run.artifacts[0].artifact_type, 'PULL_REQUEST');
    assert.equal(run.artifacts[0].data.url, 'https://example.com/pr/1');
  });

  test('ancestor_run_id follows the parent chain transitively', async () => {
    sameSet(await listIds(`ancestor_run_id=${ids.meta}`), [ids.child!, ids.grandchild!]);
    sameSet(await listIds(`ancestor_run_id=${ids.child}`), [ids.grandchild!]);
    const missing = await list('ancestor_run_id=00000000-0000-0000-0000-000000000000');
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error_code, 'invalid_request');
  });

  test('metadata pairs combine with AND, at most five', async () => {
    // The grandchild inherits the ticket through its parent.
    sameSet(await listIds('metadata[ticket]=ENG-7'), [ids.meta!, ids.child!, ids.grandchild!]);
    sameSet(await listIds('metadata[ticket]=ENG-7&metadata[stage]=prod'), [ids.meta!]);
    sameSet(await listIds('metadata%5Bstage%5D=dev'), [ids.child!, ids.grandchild!]);
    assert.deepEqual(await listIds('metadata[ticket]=ENG-8'), []);
    const six = Array.from({ length: 6 }, (_, i) => `metadata[k${i}]=v`).join('&');
    const tooMany = await list(six);
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.detail, /at most 5/);
    assert.equal((await list('metadata[bad key]=v')).status, 400);
  });

  test('dates filter strictly and must be RFC 3339', async () => {
    const all = (await list('sort_by=created_at&sort_order=asc')).body.runs;
    const third = all[2].created_at;
    const after = await listIds(`created_after=${encodeURIComponent(third)}`);
    assert.ok(!after.includes(all[0].run_id) && !after.includes(all[1].run_id));
    const before = await listIds(`created_before=${encodeURIComponent(third)}`);
    sameSet(before, [all[0].run_id, all[1].run_id]);
    assert.equal((await listIds('updated_after=2000-01-01T00:00:00Z')).length, 7);
    assert.deepEqual(await listIds('updated_after=2999-01-01T00:00:00Z'), []);
    assert.equal((await list('created_after=yesterday')).status, 400);
  });

  test('q searches title, prompt and skill spec, forgiving typos', async () => {
    sameSet(await listIds('q=billing'), [ids.plain!]);
    sameSet(await listIds('q=BILLING'), [ids.plain!]);
    sameSet(await listIds('q=biling'), [ids.plain!]);
    sameSet(await listIds('q=skills/deploy'), [ids.skill!]);
    sameSet(await listIds('q=grandchild'), [ids.grandchild!]);
    assert.deepEqual(await listIds('q=kubernetes'), []);
    assert.deepEqual(await listIds('q=%25'), []);
  });

  test('q with several words finds the runs that have each of them, misspelled or apart', async () => {
    // Two misspelled words of the title, either order, any case and spacing.
    sameSet(await listIds(`q=${encodeURIComponent('refactr biling')}`), [ids.plain!]);
    sameSet(await listIds(`q=${encodeURIComponent('  BILING\tRefactr ')}`), [ids.plain!]);
    // Words of the title and of the prompt, far apart there, each misspelled.
    sameSet(await listIds(`q=${encodeURIComponent('biling refactr modulle')}`), [ids.plain!]);
    // A word of the skill spec and one of the prompt; a short word is a substring.
    sameSet(await listIds(`q=${encodeURIComponent('acme/ops deploy')}`), [ids.skill!]);
    sameSet(await listIds(`q=${encodeURIComponent('grandchlid run')}`), [ids.grandchild!]);
    sameSet(await listIds(`q=${encodeURIComponent('zebra ag')}`), [ids.agent!]);
    // Every word must be found.
    assert.deepEqual(await listIds(`q=${encodeURIComponent('refactr kubernetes')}`), []);
    assert.deepEqual(await listIds(`q=${encodeURIComponent('zebra zz')}`), []);
    const tooMany = await list(`q=${encodeURIComponent('a b c d e f g h i j k')}`);
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.detail, /at most 10 words/);
  });

  test('limit is 1..500, default 20', async () => {
    assert.equal((await list('limit=1')).body.runs.length, 1);
    assert.equal((await list('limit=500')).status, 200);
    for (const limit of ['0', '501', '-1', 'abc', '1.5']) {
      const response = await list(`limit=${limit}`);
      assert.equal(response.status, 400, limit);
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, /limit/);
    }
  });

  test('another team sees none of these runs', async () => {
    const other = await hangar.createTeamWithUser();
    const response = await list('', other.apiKey);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.runs, []);
    assert.equal((await hangar.request('GET', `/agent/runs/${ids.plain}`, { apiKey: other.apiKey })).status, 404);
    assert.equal(
      (await hangar.request('GET', `/agent/runs/${ids.plain}/timeline`, { apiKey: other.apiKey })).status,
      404,
    );
    assert.equal(
      (await hangar.request('POST', `/agent/runs/${ids.agent}/cancel`, { apiKey: other.apiKey })).status,
      404,
    );
    assert.equal((await list(`ancestor_run_id=${ids.meta}`, other.apiKey)).status, 400);
  });
});

describe('GET /agent/runs sorting', () => {
  test('title ascending and descending, id breaking ties', async () => {
    const asc = (await list('sort_by=title&sort_order=asc')).body.runs.map((run: { title: string }) => run.title);
    assert.deepEqual(
      asc,
      [...asc].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    const desc = (await list('sort_by=title&sort_order=desc')).body.runs.map((run: { title: string }) => run.title);
    assert.deepEqual(desc, [...asc].reverse());
  });

  test('agent sort puts runs without a skill last in both directions', async () => {
    for (const order of ['asc', 'desc']) {
      const runs = (await list(`sort_by=agent&sort_order=${order}`)).body.runs;
      assert.equal(runs[0].run_id, ids.skill);
      assert.ok(runs.slice(1).every((run: { agent_skill?: unknown }) => run.agent_skill === undefined));
    }
  });

  test('created_at ascending is creation order', async () => {
    const runs = await listIds('sort_by=created_at&sort_order=asc');
    assert.deepEqual(runs.slice(0, 3), [ids.plain, ids.skill, ids.env]);
  });

  test('unknown sort or order is 400', async () => {
    assert.equal((await list('sort_by=size')).status, 400);
    assert.equal((await list('sort_order=sideways')).status, 400);
  });
});

describe('GET /agent/runs paging', () => {
  test('pages cover every run once, in every ordering', async () => {
    for (const sortBy of ['updated_at', 'created_at', 'title', 'agent']) {
      for (const order of ['asc', 'desc']) {
        const whole = await listIds(`sort_by=${sortBy}&sort_order=${order}&limit=100`);
        const paged: string[] = [];
        let cursor: string | undefined;
        do {
          const response = await list(
            `sort_by=${sortBy}&sort_order=${order}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          );
          assert.equal(response.status, 200);
          paged.push(...response.body.runs.map((run: { run_id: string }) => run.run_id));
          cursor = response.body.page_info.next_cursor;
          assert.equal(response.body.page_info.has_next_page, cursor !== undefined);
        } while (cursor);
        assert.deepEqual(paged, whole, `${sortBy} ${order}`);
      }
    }
  });

  test('a tampered cursor, or one from another sort, is 400', async () => {
    const cursor = (await list('limit=2')).body.page_info.next_cursor as string;
    const [payload, mac] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify(['updated_at:desc', ['2999-01-01T00:00:00.000000Z', 'z']])).toString(
      'base64url',
    );
    for (const bad of [`${forged}.${mac}`, `${payload}.x${mac}`, 'garbage', `${payload}`]) {
      const response = await list(`limit=2&cursor=${encodeURIComponent(bad)}`);
      assert.equal(response.status, 400, bad);
      assert.equal(response.body.error_code, 'invalid_request');
    }
    const otherSort = await list(`limit=2&sort_by=title&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(otherSort.status, 400);
    assert.match(otherSort.body.detail, /cursor/);
    const otherOrder = await list(`limit=2&sort_order=asc&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(otherOrder.status, 400);
  });
});
