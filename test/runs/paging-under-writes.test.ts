import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { GitFixtures, skillFile } from '../support/git.js';
import { addEnvironmentWithRepos, createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
const git = new GitFixtures();
before(async () => {
  git.createRepo('acme', 'repo', {
    'skills/s0/SKILL.md': skillFile('s0', 'first'),
    'skills/s1/SKILL.md': skillFile('s1', 'second'),
  });
  hangar = await startTestServer({ HANGAR_GIT_BASE_URL: git.baseUrl });
});
after(async () => {
  await hangar.stop();
  git.remove();
});

/** Pages after which no more writes happen, so that every walk ends. */
const MAX_PAGES_WITH_WRITES = 20;

/** A write between two page fetches: a new run, a cancel (moves updated_at), or a retitle. */
const write = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), title: fc.string({ maxLength: 6 }) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('retitle' as const), pick: fc.nat(), title: fc.string({ maxLength: 6 }) }),
);

test('paging while runs are created and updated never repeats or skips an unchanged run', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('updated_at', 'created_at', 'title', 'agent'),
      fc.constantFrom('asc', 'desc'),
      fc.integer({ min: 1, max: 7 }),
      fc.array(fc.array(write, { maxLength: 3 }), { minLength: 1, maxLength: 12 }),
      async (sortBy, order, limit, writesBetweenPages) => {
        // A fresh team per case, so earlier cases do not leak into this one.
        const team = await hangar.createTeamWithUser();
        await addEnvironmentWithRepos(hangar, ['acme/repo'], team.apiKey);
        const initial: string[] = [];
        for (let i = 0; i < 15; i++) {
          const skill = i % 3 === 0 ? { skill: `acme/repo:skills/s${i % 2}/SKILL.md` } : {};
          // Repeated titles and skills make ties, which only the id breaks.
          initial.push(await createRun(hangar, { prompt: `run ${i}`, title: `t${i % 4}`, ...skill }, team.apiKey));
        }
        const changed = new Set<string>();
        const seen = new Map<string, number>();
        let cursor: string | undefined;
        let page = 0;
        do {
          const query = `sort_by=${sortBy}&sort_order=${order}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const response = await hangar.request('GET', `/agent/runs?${query}`, { apiKey: team.apiKey });
          assert.equal(response.status, 200, JSON.stringify(response.body));
          for (const run of response.body.runs as { run_id: string }[])
            seen.set(run.run_id, (seen.get(run.run_id) ?? 0) + 1);
          cursor = response.body.page_info.next_cursor;
          // Writes stop after a while: runs created behind the cursor faster than pages are read would
          // otherwise keep the walk going forever.
          const writes = page < MAX_PAGES_WITH_WRITES ? writesBetweenPages[page % writesBetweenPages.length]! : [];
          for (const step of writes) {
            if (step.kind === 'create') {
              await createRun(hangar, { prompt: 'late', title: step.title || 'late' }, team.apiKey);
            } else {
              const target = initial[step.pick % initial.length]!;
              changed.add(target);
              if (step.kind === 'cancel') {
                await hangar.request('POST', `/agent/runs/${target}/cancel`, { apiKey: team.apiKey });
              } else {
                await setRunColumns(hangar, target, { title: step.title || 'x', updated_at: new Date() });
              }
            }
          }
          page++;
        } while (cursor);
        for (const id of initial) {
          if (!changed.has(id))
            assert.equal(
              seen.get(id),
              1,
              `unchanged run ${id} served ${seen.get(id) ?? 0} times (${sortBy} ${order} limit ${limit})`,
            );
        }
      },
    ),
    { numRuns: 12, endOnFailure: true },
  );
});
