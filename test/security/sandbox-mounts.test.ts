import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { eventually, harnessEnv, outputTexts, script, waitForState, waitForStateAs } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 47, finding 10: under bwrap, /proc/self/mountinfo inside a sandbox listed other teams' concurrent warm
// workspaces (their run IDs), the snapshots' directories and the data directory's path: the sandbox's root was a
// recursive bind of the host's, which takes every mount below along, and a tmpfs over the data directory only hid
// their files.
const rootSkip = process.getuid?.() === 0 ? false : 'only a root server mounts warm workspaces';
const bwrapSkip = resolveSandboxMode(undefined).mode.kind === 'bwrap' ? false : 'bwrap does not work on this machine';

for (const privateParent of [false, true]) {
  const where = privateParent ? 'in Hangar’s own workspace root' : 'in the data directory';
  describe(`a sandbox’s mount table, workspaces ${where}`, { skip: rootSkip || bwrapSkip, timeout: 180_000 }, () => {
    const git = new GitFixtures();
    let hangar: TestServer;
    before(async () => {
      git.createRepo('acme', 'app', { 'README.md': '# app\n' });
      hangar = await startTestServer(
        harnessEnv({}, { HANGAR_SANDBOX: 'bwrap', HANGAR_GIT_BASE_URL: git.baseUrl, HANGAR_SNAPSHOT_TTL: '1h' }),
        { privateParent },
      );
    });
    after(async () => {
      await hangar?.stop();
      git.remove();
    });

    async function warmEnvironment(apiKey: string): Promise<string> {
      const response = await hangar.request('POST', '/api/v1/environments', {
        apiKey,
        body: { name: 'warm', github_repos: [{ owner: 'acme', repo: 'app' }], setup_commands: ['echo x > app/built'] },
      });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      // The cold run takes the snapshot the next ones mount.
      const cold = await createRun(
        hangar,
        { prompt: script({ say: 'cold' }), config: { environment_id: response.body.uid } },
        apiKey,
      );
      const run = await waitForRun(cold, apiKey);
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      return response.body.uid;
    }

    const waitForRun = (runId: string, apiKey: string) =>
      waitForStateAs(hangar, apiKey, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');

    test('shows its own workspace only: no other run, no snapshot, not the data directory', async () => {
      const other = await hangar.createTeamWithUser();
      const otherEnvironment = await warmEnvironment(other.apiKey);
      const ownEnvironment = await warmEnvironment(hangar.apiKey);
      // The other team's warm run holds its overlay mounted while ours looks.
      const holding = await createRun(
        hangar,
        { prompt: script({ say: 'holding' }, { sleep: 120_000 }), config: { environment_id: otherEnvironment } },
        other.apiKey,
      );
      await eventually('the other team’s run holds its workspace', async () =>
        (await outputTexts(hangar, holding, other.apiKey).catch(() => [] as string[])).includes('holding'),
      );
      const hostMounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
      assert.ok(hostMounts.includes(holding), 'the other run’s workspace is mounted on the host');

      const looking = await createRun(hangar, {
        prompt: script({ cat: '/proc/self/mountinfo' }),
        config: { environment_id: ownEnvironment },
      });
      const run = await waitForState(hangar, looking, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      const [mounts = ''] = await outputTexts(hangar, looking);
      assert.match(mounts, / overlay /, 'the run’s own warm workspace is there');
      assert.ok(!mounts.includes(holding), `another run's ID is in the sandbox's mount table:\n${mounts}`);
      const snapshots = await hangar.db.selectFrom('environment_snapshots').select('id').execute();
      assert.ok(snapshots.length >= 2);
      for (const { id } of snapshots) assert.ok(!mounts.includes(id), `snapshot ${id} is named:\n${mounts}`);
      assert.ok(!mounts.includes(hangar.server.config.snapshotDir), `the snapshots' directory is named:\n${mounts}`);
      assert.ok(!mounts.includes('.layers'), `a writable layer is named:\n${mounts}`);
      // The data directory shows only as the start of the run's own workspace's path, which the run knows anyway.
      const naming = mounts.split('\n').filter((line) => line.includes(hangar.dataDir));
      assert.ok(
        naming.every((line) => line.includes(looking)),
        `the data directory is named beside the run's own workspace:\n${naming.join('\n')}`,
      );
      await hangar.request('POST', `/agent/runs/${holding}/cancel`, { apiKey: other.apiKey });
      await waitForRun(holding, other.apiKey).catch(() => undefined);
    });
  });
}
