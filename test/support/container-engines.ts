import { createHash } from 'node:crypto';
import { EngineClient } from '../../src/execution/sandbox/container/engine-client.js';
import { runQuietly } from '../../src/execution/sandbox/container/exec.js';

/** The base image scripts/container-engines.sh imports into both engines (no registry is reachable here). */
export const BASE_IMAGE = 'localhost/hangar-test/debian:bookworm';

export interface TestEngine {
  name: 'podman' | 'docker';
  dockerHost: string;
  client: EngineClient;
}

/**
 * The engines `.ci/run` prepared (HANGAR_TEST_PODMAN_HOST, HANGAR_TEST_DOCKER_HOST). None on a developer machine
 * without them: the container tests skip with `skipReason`; under CI=true that is a failure instead.
 */
export function testEngines(): { engines: TestEngine[]; skipReason: string | false } {
  const engines: TestEngine[] = [];
  for (const [name, variable] of [
    ['podman', 'HANGAR_TEST_PODMAN_HOST'],
    ['docker', 'HANGAR_TEST_DOCKER_HOST'],
  ] as const) {
    const dockerHost = process.env[variable];
    if (dockerHost) engines.push({ name, dockerHost, client: new EngineClient(dockerHost) });
  }
  if (engines.length > 0) return { engines, skipReason: false };
  if (process.env.CI === 'true')
    throw new Error(
      'CI=true, but neither HANGAR_TEST_PODMAN_HOST nor HANGAR_TEST_DOCKER_HOST is set: .ci/run prepares the engines (scripts/container-engines.sh)',
    );
  return {
    engines,
    skipReason:
      'no container engine: set HANGAR_TEST_PODMAN_HOST and/or HANGAR_TEST_DOCKER_HOST (scripts/container-engines.sh prepares both)',
  };
}

/**
 * A test image on top of the base image, made by committing a container that ran `recipe` as root, and tagged with a
 * hash of the recipe (and of `binds`, host paths the recipe reads): made only when the engine lacks that tag. (A commit needs no build context, and both engines
 * answer it the same way.)
 */
export async function testImage(engine: TestEngine, recipe: string, binds: string[] = []): Promise<string> {
  const made = JSON.stringify([recipe, ...binds]);
  const tag = `localhost/hangar-test/run-image:${createHash('sha256')
    .update(binds.length ? made : recipe)
    .digest('hex')
    .slice(0, 12)}`;
  const present = await engine.client.call('GET', `/images/${encodeURIComponent(tag)}/json`, undefined, {}, [404]);
  if (present.status !== 404) return tag;
  const { body } = await engine.client.call<{ Id: string }>('POST', '/containers/create', {
    Image: BASE_IMAGE,
    Entrypoint: ['sleep'],
    Cmd: ['infinity'],
    User: '0:0',
    HostConfig: { NetworkMode: 'none', Binds: binds },
  });
  try {
    await engine.client.call('POST', `/containers/${body.Id}/start`);
    await runQuietly(engine.client, body.Id, ['/bin/sh', '-c', recipe]);
    const [repo, version] = [tag.slice(0, tag.lastIndexOf(':')), tag.slice(tag.lastIndexOf(':') + 1)];
    await engine.client.call(
      'POST',
      `/commit?container=${body.Id}&repo=${encodeURIComponent(repo)}&tag=${version}&pause=false`,
      // The image's command: the sandbox never runs it, but an image needs one.
      { Cmd: ['sleep', 'infinity'] },
    );
  } finally {
    await engine.client.call('DELETE', `/containers/${body.Id}?force=true`, undefined, {}, [404]);
  }
  return tag;
}

/** The containers the sandbox made for one execution (`<run id>.<execution id>`), on this engine. */
export async function executionContainers(engine: TestEngine, runId: string): Promise<string[]> {
  const filters = JSON.stringify({ label: ['dev.hangar.execution'] });
  const { body } = await engine.client.call<Array<{ Id: string; Labels: Record<string, string> | null }>>(
    'GET',
    `/containers/json?all=true&filters=${encodeURIComponent(filters)}`,
  );
  return body
    .filter((container) => container.Labels?.['dev.hangar.execution']?.startsWith(`${runId}.`))
    .map((container) => container.Id);
}
