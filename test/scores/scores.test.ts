import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually, getRun, harnessEnv, outputTexts, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SCRIPT_HARNESS = fileURLToPath(new URL('../support/script-harness.mjs', import.meta.url));

describe('judge scores', () => {
  let hangar: TestServer;
  let otherTeam: { teamUid: string; apiKey: string };
  before(async () => {
    // The judge harness prints its task token and its prompt, then waits for "bye".
    const judge = {
      command: [process.execPath, SCRIPT_HARNESS],
      accepts_input: true,
      env: { SCRIPT_STEPS: JSON.stringify([{ token: true }, { prompt: true }, { listen: true }]) },
    };
    hangar = await startTestServer(harnessEnv({ judge }));
    otherTeam = await hangar.createTeamWithUser();
  });
  after(() => hangar.stop());

  const createScorer = async (body: Record<string, unknown>, apiKey?: string) => {
    const response = await hangar.request('POST', '/agent/scorers', { body, apiKey });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    return response.body;
  };

  test('scorers: create, list, get, delete; labels unique, names unique per team; other teams see nothing', async () => {
    const scorer = await createScorer({
      name: 'tidy',
      rubric: 'Is the code tidy?',
      labels: [
        { label: 'yes', score: 1 },
        { label: 'no', score: 0 },
      ],
      passing_score: 1,
    });
    assert.equal(typeof scorer.scorer_id, 'number');
    assert.deepEqual((await hangar.request('GET', `/agent/scorers/${scorer.scorer_id}`)).body, scorer);
    assert.ok(
      (await hangar.request('GET', '/agent/scorers')).body.scorers.some(
        (item: any) => item.scorer_id === scorer.scorer_id,
      ),
    );
    const again = await hangar.request('POST', '/agent/scorers', {
      body: { name: 'tidy', rubric: 'x', labels: [{ label: 'a', score: 1 }], passing_score: 1 },
    });
    assert.equal(again.status, 409);
    const twice = await hangar.request('POST', '/agent/scorers', {
      body: {
        name: 'dup',
        rubric: 'x',
        labels: [
          { label: 'a', score: 1 },
          { label: 'a', score: 2 },
        ],
        passing_score: 1,
      },
    });
    assert.equal(twice.status, 400);
    assert.equal(
      (
        await hangar.request('POST', '/agent/scorers', {
          body: { name: 'empty', rubric: 'x', labels: [], passing_score: 1 },
        })
      ).status,
      400,
    );
    assert.equal(
      (await hangar.request('GET', `/agent/scorers/${scorer.scorer_id}`, { apiKey: otherTeam.apiKey })).status,
      404,
    );
    assert.deepEqual((await hangar.request('GET', '/agent/scorers', { apiKey: otherTeam.apiKey })).body.scorers, []);
    assert.equal(
      (await hangar.request('DELETE', `/agent/scorers/${scorer.scorer_id}`, { apiKey: otherTeam.apiKey })).status,
      404,
    );
    assert.equal((await hangar.request('DELETE', `/agent/scorers/${scorer.scorer_id}`)).status, 204);
    assert.equal((await hangar.request('GET', `/agent/scorers/${scorer.scorer_id}`)).status, 404);
  });

  test('a judge run scores a run: mixed verdicts get 206, the scored run shows the accepted ones, only the judge may send', async () => {
    const correctness = await createScorer({
      name: 'correctness',
      rubric: 'Was the task done?',
      labels: [
        { label: 'done', score: 10 },
        { label: 'partly', score: 5 },
        { label: 'not done', score: 0 },
      ],
      passing_score: 10,
    });
    const style = await createScorer({
      name: 'style',
      rubric: 'Is it readable?',
      labels: [
        { label: 'clear', score: 1 },
        { label: 'messy', score: 0 },
      ],
      passing_score: 1,
    });
    const unassigned = await createScorer({
      name: 'unassigned',
      rubric: 'x',
      labels: [{ label: 'ok', score: 1 }],
      passing_score: 1,
    });
    const foreign = await createScorer(
      { name: 'foreign', rubric: 'x', labels: [{ label: 'ok', score: 1 }], passing_score: 1 },
      otherTeam.apiKey,
    );

    const scoredId = await createRun(hangar, {
      title: 'Fix the login',
      prompt: script({ say: 'fixed' }, { done: 'login works' }),
    });
    assert.equal((await waitForState(hangar, scoredId, 'SUCCEEDED', 'FAILED')).state, 'SUCCEEDED');

    // Scorers of another team, or none, cannot be given.
    assert.equal(
      (await hangar.request('POST', `/agent/runs/${scoredId}/judge`, { body: { scorer_ids: [foreign.scorer_id] } }))
        .status,
      400,
    );
    assert.equal(
      (await hangar.request('POST', `/agent/runs/${scoredId}/judge`, { body: { scorer_ids: [] } })).status,
      400,
    );
    assert.equal(
      (
        await hangar.request('POST', `/agent/runs/${scoredId}/judge`, {
          body: { scorer_ids: [correctness.scorer_id] },
          apiKey: otherTeam.apiKey,
        })
      ).status,
      404,
    );

    const dispatched = await hangar.request('POST', `/agent/runs/${scoredId}/judge`, {
      body: { scorer_ids: [correctness.scorer_id, style.scorer_id], config: { harness: { type: 'judge' } } },
    });
    assert.equal(dispatched.status, 200, JSON.stringify(dispatched.body));
    const judgeId = dispatched.body.run_id;
    const judgeRun = await getRun(hangar, judgeId);
    assert.equal(judgeRun.source, 'RUN_SCORER');
    assert.equal(judgeRun.parent_run_id, scoredId);
    assert.equal(judgeRun.title, 'Judge: Fix the login');

    let texts: string[] = [];
    await eventually(
      'the judge printed its token and prompt',
      async () => (texts = await outputTexts(hangar, judgeId).catch(() => [])).length >= 2,
    );
    const token = texts[0]!.slice('token:'.length);
    assert.match(texts[1]!, /Was the task done\?/);
    assert.match(texts[1]!, /done: 10; partly: 5; not done: 0\. Passing score: 10\./);
    assert.match(texts[1]!, new RegExp(`/agent/runs/${scoredId}/scores`));

    const send = (authorization: string | undefined, body: unknown, runId = scoredId) =>
      fetch(`${hangar.apiUrl}/agent/runs/${runId}/scores`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      });
    const verdicts = {
      results: [
        { scorer_id: correctness.scorer_id, classification: 'excellent', reason: 'x', failed: false },
        { scorer_id: correctness.scorer_id, classification: 'partly', reason: 'only the happy path', failed: false },
        { scorer_id: style.scorer_id, classification: 'clear', reason: 'short functions', failed: false },
        { scorer_id: style.scorer_id, classification: 'messy', reason: 'second opinion', failed: false },
        { scorer_id: unassigned.scorer_id, classification: 'ok', reason: 'x', failed: false },
        { scorer_id: 'one', classification: 'ok' },
      ],
    };
    // Nobody but the judge: no credential 401, a bad key 401, a team member's key 403, another run's token 401/403.
    assert.equal((await send(undefined, verdicts)).status, 401);
    assert.equal((await send('Bearer hgr_nonsense', verdicts)).status, 401);
    assert.equal((await send(`Bearer ${hangar.apiKey}`, verdicts)).status, 403);
    assert.equal((await send(`Bearer ${token}`, verdicts, judgeId)).status, 403);

    const mixed = await send(`Bearer ${token}`, verdicts);
    assert.equal(mixed.status, 206);
    const statuses = ((await mixed.json()) as any).results;
    assert.deepEqual(
      statuses.map((result: any) => result.status),
      ['rejected', 'accepted', 'accepted', 'rejected', 'rejected', 'rejected'],
    );
    assert.match(statuses[0].error, /not a label/);
    assert.match(statuses[3].error, /earlier in this request/);
    assert.match(statuses[4].error, /was not given to this judge run/);
    assert.equal(statuses[5].scorer_id, null);
    assert.match(statuses[5].error, /scorer_id/);
    const partly = (await getRun(hangar, scoredId)).scores.find((score: any) => score.scorer_name === 'correctness');
    assert.deepEqual([partly.classification, partly.score, partly.passed], ['partly', 5, false]);

    // A subset is fine, and all accepted is 200; answering again replaces the judge's verdict.
    const subset = await send(`Bearer ${token}`, {
      results: [{ scorer_id: correctness.scorer_id, classification: 'done', reason: 'all paths now', failed: false }],
    });
    assert.equal(subset.status, 200);
    assert.deepEqual(((await subset.json()) as any).results, [
      { scorer_id: correctness.scorer_id, status: 'accepted' },
    ]);
    assert.equal((await send(`Bearer ${token}`, { results: [] })).status, 400);

    const scored = await getRun(hangar, scoredId);
    const byScorer = Object.fromEntries(scored.scores.map((score: any) => [score.scorer_name, score]));
    assert.equal(scored.scores.length, 2);
    assert.deepEqual(
      { ...byScorer.correctness, created_at: undefined },
      {
        scorer_id: correctness.scorer_id,
        scorer_name: 'correctness',
        classification: 'done',
        score: 10,
        passed: true,
        failed: false,
        reason: 'all paths now',
        judge_run_id: judgeId,
        created_at: undefined,
      },
    );
    assert.equal(byScorer.style.passed, true);
    assert.deepEqual(
      (await hangar.request('GET', `/agent/runs?limit=50`)).body.runs.find((item: any) => item.run_id === scoredId)
        .scores.length,
      2,
    );

    // The judge's token stops working when it ends.
    assert.equal(
      (await hangar.request('POST', `/agent/runs/${judgeId}/followups`, { body: { message: 'bye' } })).status,
      200,
    );
    assert.equal((await waitForState(hangar, judgeId, 'SUCCEEDED', 'FAILED')).state, 'SUCCEEDED');
    assert.equal(
      (
        await send(`Bearer ${token}`, {
          results: [{ scorer_id: style.scorer_id, classification: 'messy', reason: 'late', failed: false }],
        })
      ).status,
      401,
    );
  });
});
