import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 48, item 5.1: how people misspell. `flakey` keeps 0.57 of pg_trgm's word similarity to `flaky`, under
 * the 0.6 that every word had to reach, so `q=flakey webhok` found none of the runs about the flaky webhook test.
 */
let hangar: TestServer;
const flaky: string[] = [];
const others: Record<string, string> = {};

async function search(q: string, extra = ''): Promise<string[]> {
  const response = await hangar.request('GET', `/agent/runs?limit=100&q=${encodeURIComponent(q)}${extra}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.runs.map((run: { run_id: string }) => run.run_id);
}

const sorted = (ids: string[]) => [...ids].sort();

before(async () => {
  hangar = await startTestServer();
  for (let i = 0; i < 20; i++) flaky.push(await createRun(hangar, { prompt: `fix the flaky webhook test (#${i})` }));
  // Each has one of the words only, or a word that merely looks like one.
  others.webhookOnly = await createRun(hangar, { prompt: 'document the webhook retries' });
  others.flakyOnly = await createRun(hangar, { prompt: 'the flaky login test' });
  others.lookalikes = await createRun(hangar, { prompt: 'raise the flag on the webpack build' });
});
after(() => hangar.stop());

describe('runs search forgives a misspelled word of five letters or more', () => {
  test('q=flakey webhok finds all 20 runs about the flaky webhook test, and only them', async () => {
    assert.deepEqual(sorted(await search('flakey webhok')), sorted(flaky));
    assert.deepEqual(sorted(await search('WEBHOK Flakey')), sorted(flaky));
    // One word misspelled, the other right; a letter dropped, added or changed in a word of five or more.
    assert.deepEqual(sorted(await search('flakey webhook')), sorted(flaky));
    assert.deepEqual(sorted(await search('flaky wbhook test')), sorted(flaky));
    assert.deepEqual(sorted(await search('flakey')), sorted([...flaky, others.flakyOnly!]));
  });

  test('every word must still be found; a short word is not forgiven more', async () => {
    assert.deepEqual(await search('flakey kubernetes'), []);
    assert.deepEqual(sorted(await search('webhok retries')), [others.webhookOnly!]);
    // `flag` and `webpack` are not close spellings of `flaky` and `webhook`.
    assert.deepEqual(await search('flakey webhok build'), []);
    assert.ok(!(await search('flakey')).includes(others.lookalikes!));
    assert.ok(!(await search('webhok')).includes(others.lookalikes!));
    // Under five letters pg_trgm's default still holds: `fiz` shares half its trigrams with `fix`, not enough.
    assert.deepEqual(await search('fiz'), []);
    assert.equal((await search('fix')).length, 20);
  });

  test("the page keeps the interface's order (sort_by, newest update first by default) and pages with its cursor", async () => {
    const all = await search('flakey webhok');
    assert.deepEqual(all, [...flaky].reverse(), 'the runs were created (and so updated) in order');
    const first = await hangar.request('GET', `/agent/runs?limit=15&q=${encodeURIComponent('flakey webhok')}`);
    assert.equal(first.body.runs.length, 15);
    const second = await hangar.request(
      'GET',
      `/agent/runs?limit=15&q=${encodeURIComponent('flakey webhok')}&cursor=${encodeURIComponent(first.body.page_info.next_cursor)}`,
    );
    assert.deepEqual(
      [...first.body.runs, ...second.body.runs].map((run: { run_id: string }) => run.run_id),
      all,
    );
    assert.deepEqual(await search('flakey webhok', '&sort_by=created_at&sort_order=asc'), flaky);
  });
});
