import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { createTestDatabase, type TestDatabase } from '../support/server.js';

// Issue 47, "also found": each server left a `hangar-run-files-*` directory (the clones' git config, a networked
// sandbox's resolv.conf) in the system's temporary directory, never removed.
const rootSkip = process.getuid?.() === 0 ? false : 'only a root server clones as its run user (the git config file)';

/** This machine's run-files directories of process `pid`. */
function runFilesOf(pid: number): string[] {
  return fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith(`hangar-run-files-${pid}-`));
}

describe('the run-readable files of a server', { skip: rootSkip, timeout: 180_000 }, () => {
  const git = new GitFixtures();
  let database: TestDatabase;
  let env: Record<string, string>;
  const children: ChildProcess[] = [];
  before(async () => {
    git.createRepo('acme', 'app', { 'README.md': '# app\n' });
    database = await createTestDatabase();
    env = harnessEnv({}, { HANGAR_GIT_BASE_URL: git.baseUrl });
  });
  after(async () => {
    for (const child of children) await stopChild(child, 'SIGKILL');
    await database?.drop();
    git.remove();
  });

  /** A server that clones a repository (its run user reads the clones' git config, a run-readable file). */
  async function serverThatCloned(): Promise<ChildProcess> {
    const started = await spawnKeyedServer(database, env);
    // The next server starts with the key of this one.
    env = started.env;
    children.push(started.child);
    const hangar = started.hangar;
    const created = await hangar.request('POST', '/api/v1/environments', {
      body: { name: `env ${Math.random()}`, github_repos: [{ owner: 'acme', repo: 'app' }] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = await createRun(hangar, {
      prompt: script({ cat: 'app/README.md' }),
      config: { environment_id: created.body.uid },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    return started.child;
  }

  test('go when the server stops, and a killed server’s go when the next one makes its own', async () => {
    const killed = await serverThatCloned();
    assert.equal(runFilesOf(killed.pid!).length, 1, 'the server made its directory');
    await stopChild(killed, 'SIGKILL');
    assert.equal(runFilesOf(killed.pid!).length, 1, 'a SIGKILL leaves it');

    const stopped = await serverThatCloned();
    assert.deepEqual(runFilesOf(killed.pid!), [], "the killed server's directory is gone");
    assert.equal(runFilesOf(stopped.pid!).length, 1);
    const exit = await stopChild(stopped, 'SIGTERM');
    assert.equal(exit.code, 0);
    assert.deepEqual(runFilesOf(stopped.pid!), [], 'a stopped server leaves nothing');
  });
});
