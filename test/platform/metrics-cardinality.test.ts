import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertApiKey, insertMembership, insertTeam, insertUser } from '../../src/identities/store.js';
import { generateApiKey } from '../../src/platform/crypto.js';
import { startTestServer, type TestServer } from '../support/server.js';

const TOKEN = 'metrics-token-cardinality-0123';
const TEAMS = 50;
const USERS = 1000;
/** Runs per user: 1000 in all. */
const RUNS_PER_USER = 1;
/**
 * Series the 1000 runs may add at most, whatever their teams and users: the run counters' few label combinations,
 * the HTTP routes they used, and the queue depth of the top teams plus `other`.
 */
const MAX_NEW_SERIES = 120;

/** The series of a scrape: every sample line, by name and labels. */
async function series(hangar: TestServer): Promise<Set<string>> {
  const response = await fetch(`${hangar.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(response.status, 200);
  const lines = (await response.text()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  return new Set(lines.map((line) => line.slice(0, line.lastIndexOf(' '))));
}

describe('metrics cardinality', () => {
  let hangar: TestServer;
  before(async () => {
    // No harness and no model credentials: runs stay queued, as many as are created.
    hangar = await startTestServer({ HANGAR_METRICS_TOKEN: TOKEN });
  });
  after(async () => {
    await hangar?.stop();
  });

  test('1000 runs of 50 teams and 1000 users add a bounded number of series, none naming a run or a user', async () => {
    const { db } = hangar;
    const teams = await Promise.all(Array.from({ length: TEAMS }, (_, i) => insertTeam(db, `cardinality-${i}`)));
    const users: Array<{ uid: string; key: string }> = [];
    for (let i = 0; i < USERS; i++) {
      const uid = await insertUser(db, { displayName: `User ${i}` });
      await insertMembership(db, teams[i % TEAMS]!, uid, 'admin');
      const key = generateApiKey();
      await insertApiKey(db, { userUid: uid }, key, 'cardinality');
      users.push({ uid, key });
    }
    const seriesBefore = await series(hangar);

    const runIds: string[] = [];
    // A few users at a time: enough to be quick, few enough not to fill the pool.
    for (let start = 0; start < users.length; start += 20) {
      const batch = users.slice(start, start + 20);
      const created = await Promise.all(
        batch.flatMap((user) =>
          Array.from({ length: RUNS_PER_USER }, async () => {
            const response = await hangar.request('POST', '/agent/runs', {
              apiKey: user.key,
              body: { prompt: `run of ${user.uid}`, title: `title ${user.uid}` },
            });
            assert.equal(response.status, 200, JSON.stringify(response.body));
            return response.body.run_id as string;
          }),
        ),
      );
      runIds.push(...created);
    }
    // Every fourth run is cancelled: ended runs count by state too.
    for (let i = 0; i < runIds.length; i += 4) {
      const response = await hangar.request('POST', `/agent/runs/${runIds[i]}/cancel`, { apiKey: users[i]!.key });
      assert.equal(response.status, 200);
    }
    // A refused create: its latency is a series of its own status class (issue 48 item 5.2).
    const refused = await hangar.request('POST', '/agent/runs', { body: { prompt: 42 } });
    assert.equal(refused.status, 400);
    const seriesAfter = await series(hangar);

    const added = [...seriesAfter].filter((name) => !seriesBefore.has(name));
    assert.ok(
      added.length <= MAX_NEW_SERIES,
      `${added.length} new series (at most ${MAX_NEW_SERIES}):\n${added.slice(0, 50).join('\n')}`,
    );
    const text = [...seriesAfter].join('\n');
    for (const runId of runIds.slice(0, 50)) assert.ok(!text.includes(runId), `a series names run ${runId}`);
    for (const user of users.slice(0, 50)) assert.ok(!text.includes(user.uid), `a series names user ${user.uid}`);
    const teamSeries = [...seriesAfter].filter((name) => name.startsWith('hangar_runs_queue_depth_by_team{'));
    assert.ok(teamSeries.length <= 11, `queue depth by team: ${teamSeries.length} series`);
    assert.ok(teamSeries.some((name) => name.includes('team="other"')));
    // Request latency by outcome: the status class, never the code or anything else.
    const created = 'hangar_http_request_duration_seconds_count{method="POST",route="/api/v1/agent/runs"';
    assert.ok(seriesAfter.has(`${created},status_class="2xx"}`), text);
    assert.ok(seriesAfter.has(`${created},status_class="4xx"}`), text);
    for (const name of seriesAfter)
      if (name.startsWith('hangar_http_request_duration_seconds'))
        assert.match(name, /,status_class="[1-5]xx"(,le="[^"]+")?\}$/);
    // The counters saw every run all the same.
    assert.match(text, /hangar_runs_created_total\{source="API",harness="default"\}/);
    // Cancelled before any harness took them: harness "none".
    assert.match(text, /hangar_runs_ended_total\{state="CANCELLED",error_code="none",harness="none",source="API"\}/);
  });
});
