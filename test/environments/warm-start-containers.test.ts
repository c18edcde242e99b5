import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { BASE_IMAGE, type TestEngine, testEngines, testImage } from '../support/container-engines.js';
import { eventually, outputTexts, waitForState } from '../support/engine.js';
import { GitFixtures } from '../support/git.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Warm starts under the container sandbox (issue 28): a snapshot is the execution's container committed as an image
// (what setup left outside the workspace) plus the workspace's files, on Podman's service and on Docker.
const SHELL_HARNESS = fileURLToPath(new URL('../execution/fixtures/shell-harness.mjs', import.meta.url));
const { engines, skipReason } = testEngines();
const configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-warm-containers-'));
const git = new GitFixtures();
before(() => {
  git.createRepo('acme', 'app', { 'README.md': '# app\n', 'package-lock.json': '{"v":1}\n' });
});
after(() => {
  git.remove();
  fs.rmSync(configDirectory, { recursive: true, force: true });
});

/** Setup that leaves a mark outside the workspace (only a committed container keeps it) and one inside. */
const SETUP = 'echo set-up > /tmp/from-setup && env > /tmp/setup-env && echo run >> setup-count.txt';

for (const engine of engines) {
  describe(`warm starts in containers on ${engine.name}`, { skip: skipReason }, () => {
    let hangar: TestServer;
    before(async () => {
      const file = path.join(configDirectory, `${engine.name}.yaml`);
      fs.writeFileSync(
        file,
        YAML.stringify({
          default_harness: 'shell',
          harnesses: { shell: { command: [process.execPath, SHELL_HARNESS], timeout_minutes: 5 } },
        }),
      );
      hangar = await startTestServer({
        HANGAR_CONFIG: file,
        HANGAR_RUN_LEASE_SECONDS: '6',
        HANGAR_SANDBOX: 'container',
        DOCKER_HOST: engine.dockerHost,
        HANGAR_DEFAULT_IMAGE: BASE_IMAGE,
        HANGAR_SETUP_NETWORK: 'false',
        HANGAR_GIT_BASE_URL: git.baseUrl,
        HANGAR_SNAPSHOT_TTL: '24h',
      });
    });
    after(async () => {
      // The engines outlive the test: its snapshots' images go with it.
      for (const id of await snapshotImages(engine, hangar)) await removeImage(engine, id);
      await hangar?.stop();
    });

    async function environment(body: Record<string, unknown> = {}): Promise<string> {
      const response = await hangar.request('POST', '/api/v1/environments', {
        body: {
          name: `env ${Math.random()}`,
          github_repos: [{ owner: 'acme', repo: 'app' }],
          setup_commands: [SETUP],
          ...body,
        },
      });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      return response.body.uid;
    }

    async function runIn(environmentId: string, command: string) {
      const runId = await createRun(hangar, { prompt: command, config: { environment_id: environmentId } });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED');
      const events = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events as Array<{
        event_type: string;
        payload?: Record<string, any>;
      }>;
      return {
        run,
        done: events.find((event) => event.event_type === 'environment_setup_done')?.payload,
        events: events.map((event) => event.event_type),
        ready: events.find((event) => event.event_type === 'worker_container_ready')?.payload,
        /** The images of the execution's containers, in order. */
        images: events
          .filter((event) => event.event_type === 'worker_container_ready')
          .map((event) => String(event.payload?.image)),
        setupCommands: events.filter((event) => event.event_type === 'environment_setup_command').length,
        lines: run.state === 'SUCCEEDED' ? await outputTexts(hangar, runId) : [],
      };
    }

    const rows = (environmentId: string) =>
      hangar.db.selectFrom('environment_snapshots').selectAll().where('environment_uid', '=', environmentId).execute();

    test('cold, then warm from the committed container, then updated; what a run does reaches no snapshot', async () => {
      const environmentId = await environment({ docker_image: await imageWithGit(engine) });
      const cold = await runIn(
        environmentId,
        'echo "$HANGAR_TASK_TOKEN" > /tmp/agent-token && echo agent > agent-wrote.txt && cat /tmp/from-setup && ' +
          `awk '$2 == "/workspace" { print $3 }' /proc/self/mounts`,
      );
      assert.equal(cold.run.state, 'SUCCEEDED', JSON.stringify(cold));
      assert.equal(cold.done?.path, 'cold');
      assert.equal(cold.setupCommands, 1);
      assert.equal(typeof cold.done?.steps_ms.snapshot, 'number');
      // The snapshot copied nothing: setup's container was committed, its workspace became the snapshot, and the
      // agent ran in a container of the committed image over an overlay of it, as a warm start does.
      assert.equal(cold.images.length, 2, JSON.stringify(cold.images));
      assert.match(cold.images[1]!, /hangar-snapshot:/);
      assert.deepEqual(cold.lines, ['set-up', 'overlay']);
      const [row] = await rows(environmentId);
      assert.equal(row?.state, 'ready');
      assert.deepEqual(await snapshotImages(engine, hangar), [row!.id]);

      const warm = await runIn(
        environmentId,
        [
          'cat /tmp/from-setup setup-count.txt',
          'ls /tmp/agent-token agent-wrote.txt 2>/dev/null | wc -l',
          'grep -c HANGAR_TASK_TOKEN /tmp/setup-env',
          `awk '$2 == "/workspace" { print $3 }' /proc/self/mounts`,
          'echo more >> setup-count.txt && echo changed > /tmp/from-setup',
        ].join('; '),
      );
      assert.equal(warm.run.state, 'SUCCEEDED', JSON.stringify(warm.run));
      assert.equal(warm.done?.path, 'warm');
      assert.equal(warm.setupCommands, 0, 'a warm start runs no setup');
      assert.match(String(warm.ready?.image), /hangar-snapshot:/);
      // Setup's file outside the workspace is there; the cold run's agent's files and token are not, and setup
      // never had the token.
      assert.deepEqual(warm.lines, ['set-up', 'run', '0', '0', 'overlay']);

      // The next warm start sees the snapshot as it was, not the last run's changes (in the container or workspace).
      const again = await runIn(environmentId, 'cat /tmp/from-setup setup-count.txt');
      assert.equal(again.done?.path, 'warm');
      assert.deepEqual(again.lines, ['set-up', 'run']);

      // A commit: the repository is brought up to date in the snapshot's container; setup runs again when the
      // lockfile changed (the default when_lockfiles_change).
      git.commit('acme', 'app', { 'package-lock.json': `{"v":"${engine.name}"}\n` });
      const updated = await runIn(environmentId, 'cat /tmp/from-setup setup-count.txt app/package-lock.json');
      assert.equal(updated.run.state, 'SUCCEEDED', JSON.stringify(updated.run));
      assert.equal(updated.done?.path, 'updated');
      assert.equal(updated.setupCommands, 1);
      assert.deepEqual(updated.lines, ['set-up', 'run', 'run', `{"v":"${engine.name}"}`]);
      const newer = await rows(environmentId);
      assert.equal(newer.length, 1, 'the updated snapshot supersedes the old one');
      assert.notEqual(newer[0]!.id, row!.id);
      // The old image goes with its record once no container runs from it: the updated run's container did when its
      // record went, so a later maintenance (after another snapshot) removes it (its layers stay under the newer).
      assert.ok((await snapshotImages(engine, hangar)).includes(newer[0]!.id));
      assert.equal((await runIn(await environment({ setup_commands: ['echo other'] }), 'echo ok')).done?.path, 'cold');
      // Maintenance runs beside the executions, not in their way.
      await eventually('the superseded snapshot’s image is gone', async () => {
        const images = await snapshotImages(engine, hangar);
        return images.includes(newer[0]!.id) && !images.includes(row!.id);
      });
      // Nothing of the runs' own is in the image's configuration either.
      const token = (await runIn(environmentId, 'cat /tmp/agent-token 2>/dev/null; echo "$HANGAR_TASK_TOKEN"')).lines;
      assert.equal(token.length, 1);
      const inspected = await engine.client.call<any>(
        'GET',
        `/images/${encodeURIComponent(`localhost/hangar-snapshot:${newer[0]!.id}`)}/json`,
      );
      assert.ok(!JSON.stringify(inspected.body).includes('HANGAR_TASK_TOKEN'));
    });

    test('a cold start checks its repositories out while its container starts', async () => {
      // The engine's container sandbox, whose open waits (a bounded while) for the clone to be in the workspace:
      // a clone that waited for the container first would never be.
      const backend = (hangar.server.engine as any).options.context.sandbox;
      const open = backend.open;
      let checkedOutFirst: boolean | undefined;
      backend.open = async (request: { workspace: string }) => {
        if (checkedOutFirst === undefined) {
          const readme = path.join(request.workspace, 'app', 'README.md');
          // As the sandbox's open does: the clone is a file in the workspace, no event tells of it.
          for (let i = 0; i < 300 && !fs.existsSync(readme); i++) await sleep(100);
          checkedOutFirst = fs.existsSync(readme);
        }
        return open.call(backend, request);
      };
      try {
        const cold = await runIn(
          await environment({ setup_commands: ['cat app/README.md > /tmp/readme'] }),
          'cat /tmp/readme',
        );
        assert.equal(cold.done?.path, 'cold');
        assert.deepEqual(cold.lines, ['# app']);
      } finally {
        backend.open = open;
      }
      assert.equal(checkedOutFirst, true);
    });

    test('a cold start freezes setup’s container for its snapshot and removes it only once the agent’s is started', async () => {
      // The engine calls of the execution, as made (each still goes to the engine).
      const client = (hangar.server.engine as any).options.context.sandbox.client;
      const call = client.call;
      const calls: string[] = [];
      client.call = function (method: string, url: string, ...rest: unknown[]) {
        if (/^\/containers\/[^/?]+(\/(create|start|pause))?(\?|$)|^\/containers\/create/.test(url))
          calls.push(`${method} ${url.split('?')[0]}`);
        return call.call(this, method, url, ...rest);
      };
      let cold: Awaited<ReturnType<typeof runIn>>;
      try {
        cold = await runIn(await environment(), 'echo ok');
      } finally {
        client.call = call;
      }
      assert.equal(cold.done?.path, 'cold');
      assert.deepEqual(cold.lines, ['ok']);
      const started = calls.filter((line) => /^POST \/containers\/[^/]+\/start$/.test(line));
      assert.equal(started.length, 2, calls.join('\n'));
      const setupContainer = /^POST \/containers\/([^/]+)\/start$/.exec(started[0]!)![1]!;
      const agentStart = calls.indexOf(started[1]!);
      const paused = calls.indexOf(`POST /containers/${setupContainer}/pause`);
      const removed = calls.indexOf(`DELETE /containers/${setupContainer}`);
      assert.ok(
        paused >= 0 && paused < agentStart,
        `setup's container is paused before the agent's starts:\n${calls.join('\n')}`,
      );
      assert.ok(removed > agentStart, `and removed after:\n${calls.join('\n')}`);
      await eventually('setup’s container is gone', async () => {
        const found = await engine.client.call('GET', `/containers/${setupContainer}/json`, undefined, {}, [404]);
        return found.status === 404;
      });
    });

    test('a changed image or setup never reuses a snapshot; a failed setup is never committed', async () => {
      const environmentId = await environment();
      assert.equal((await runIn(environmentId, 'echo ok')).done?.path, 'cold');
      assert.equal((await runIn(environmentId, 'echo ok')).done?.path, 'warm');
      const put = async (body: Record<string, unknown>) => {
        const response = await hangar.request('PUT', `/api/v1/environments/${environmentId}`, {
          body: { name: 'changed', github_repos: [{ owner: 'acme', repo: 'app' }], ...body },
        });
        assert.equal(response.status, 200, JSON.stringify(response.body));
      };
      await put({ setup_commands: [`${SETUP} && echo two > /tmp/two`] });
      const changed = await runIn(environmentId, 'cat /tmp/two');
      assert.equal(changed.done?.path, 'cold');
      assert.deepEqual(changed.lines, ['two']);
      const other = await otherImage(engine);
      await put({ setup_commands: [SETUP], docker_image: other });
      assert.equal((await runIn(environmentId, 'echo ok')).done?.path, 'cold');
      assert.equal((await runIn(environmentId, 'echo ok')).done?.path, 'warm');

      const failing = await environment({ setup_commands: ['echo partial > /tmp/partial && exit 3'] });
      const before = await snapshotImages(engine, hangar);
      const failed = await runIn(failing, 'echo ok');
      assert.equal(failed.run.state, 'FAILED');
      assert.equal((await rows(failing)).length, 0);
      assert.deepEqual(await snapshotImages(engine, hangar), before);
    });

    test('two executions that would make the same snapshot at once make one image; rebuild drops it', async () => {
      const environmentId = await environment();
      const both = await Promise.all([runIn(environmentId, 'echo ok'), runIn(environmentId, 'echo ok')]);
      for (const { run } of both) assert.equal(run.state, 'SUCCEEDED');
      const made = await rows(environmentId);
      assert.equal(made.length, 1);
      assert.ok((await snapshotImages(engine, hangar)).includes(made[0]!.id));
      const dropped = await hangar.request('POST', `/api/v1/admin/environments/${environmentId}/rebuild`);
      assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
      // The next run is cold, and its snapshot's maintenance removes the dropped one's image.
      assert.equal((await runIn(environmentId, 'echo ok')).done?.path, 'cold');
      await eventually(
        'the dropped snapshot’s image is gone',
        async () => !(await snapshotImages(engine, hangar)).includes(made[0]!.id),
      );
    });
  });
}

/** The snapshot ids whose images the engine holds for a server (by its workspace root's label). */
async function snapshotImages(engine: TestEngine, hangar: TestServer): Promise<string[]> {
  const root = fs.realpathSync(path.join(hangar.dataDir, 'workspaces'));
  const filters = encodeURIComponent(JSON.stringify({ label: [`dev.hangar.workspace-root=${root}`] }));
  const { body } = await engine.client.call<Array<{ RepoTags?: string[] | null; Names?: string[] | null }>>(
    'GET',
    `/images/json?filters=${filters}`,
  );
  const ids = new Set<string>();
  for (const image of body)
    for (const tag of [...(image.RepoTags ?? []), ...(image.Names ?? [])]) {
      const match = /hangar-snapshot:([0-9a-f]{24})$/.exec(tag);
      if (match) ids.add(match[1]!);
    }
  return [...ids].sort();
}

async function removeImage(engine: TestEngine, id: string): Promise<void> {
  await engine.client
    .call(
      'DELETE',
      `/images/${encodeURIComponent(`localhost/hangar-snapshot:${id}`)}?force=true`,
      undefined,
      {},
      [404, 409],
    )
    .catch(() => undefined);
}

/**
 * The base image with the host's git (Debian's, as the image's): an updated start brings the repositories up to date
 * inside the container, with the image's own git. Made once per engine.
 */
function imageWithGit(engine: TestEngine): Promise<string> {
  return testImage(engine, 'cp /host-git /usr/bin/git', ['/usr/bin/git:/host-git:ro']);
}

/** Another image than the base. */
function otherImage(engine: TestEngine): Promise<string> {
  return testImage(engine, 'echo other > /etc/hangar-warm-other');
}
