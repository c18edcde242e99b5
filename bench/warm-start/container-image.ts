import fs from 'node:fs';
import type { EngineClient } from '../../src/execution/sandbox/container/engine-client.js';
import { runQuietly } from '../../src/execution/sandbox/container/exec.js';
import type { ContainerLimits } from '../../src/execution/sandbox/container/limits.js';

/** The bench's image under HANGAR_SANDBOX=container: no registry is reachable here, so it is made from local parts. */
export const BENCH_IMAGE = 'localhost/hangar-bench/warm:latest';

/**
 * The base image with the host's node, npm and git (Debian's, as the base's) and the fixture's npm cache at
 * /opt/npm-cache: what an environment's image for a Node project would hold. Made by committing a container that
 * copied them in from read-only binds.
 */
export async function makeBenchImage(client: EngineClient, baseImage: string, npmCache: string): Promise<void> {
  const npmRoot = fs.realpathSync('/usr/lib/node_modules/npm');
  const { body } = await client.call<{ Id: string }>('POST', '/containers/create', {
    Image: baseImage,
    Entrypoint: ['sleep'],
    Cmd: ['infinity'],
    User: '0:0',
    HostConfig: {
      NetworkMode: 'none',
      Binds: [
        `${fs.realpathSync(process.execPath)}:/host/node:ro`,
        `${npmRoot}:/host/npm:ro`,
        '/usr/bin/git:/host/git:ro',
        `${npmCache}:/host/npm-cache:ro`,
      ],
    },
  });
  try {
    await client.call('POST', `/containers/${body.Id}/start`);
    await runQuietly(client, body.Id, [
      '/bin/sh',
      '-c',
      'cp /host/node /usr/bin/node && mkdir -p /usr/lib/node_modules && cp -a /host/npm /usr/lib/node_modules/npm && ' +
        'ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/bin/npm && cp /host/git /usr/bin/git && ' +
        'cp -a /host/npm-cache /opt/npm-cache && chmod -R a+rX /opt/npm-cache',
    ]);
    const [repo, tag] = BENCH_IMAGE.split(/:(?=[^:]+$)/) as [string, string];
    await client.call('POST', `/commit?container=${body.Id}&repo=${encodeURIComponent(repo)}&tag=${tag}&pause=false`, {
      Cmd: ['sleep', 'infinity'],
    });
  } finally {
    await client.call('DELETE', `/containers/${body.Id}?force=true`, undefined, {}, [404]);
  }
}

/**
 * The by-hand baseline's setup under containers: a container from the bench image over the directory the clone is
 * in, running `script` there, then removed (what `docker run --rm -v DIR:/w IMAGE sh -c SCRIPT` does).
 */
export async function runInContainer(
  client: EngineClient,
  directory: string,
  script: string,
  /** The limits Hangar's run containers get (HANGAR_RUN_*): the same work under the same limits. */
  limits: ContainerLimits,
): Promise<void> {
  const { body } = await client.call<{ Id: string }>('POST', '/containers/create', {
    Image: BENCH_IMAGE,
    Entrypoint: ['/bin/sh', '-c'],
    Cmd: [script],
    WorkingDir: '/w',
    Env: ['HOME=/w'],
    HostConfig: {
      NetworkMode: 'none',
      Binds: [`${directory}:/w:rw`],
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pids,
    },
  });
  try {
    await client.call('POST', `/containers/${body.Id}/start`);
    const { body: waited } = await client.call<{ StatusCode: number }>('POST', `/containers/${body.Id}/wait`);
    if (waited.StatusCode !== 0) throw new Error(`the by-hand setup exited with ${waited.StatusCode}`);
  } finally {
    await client.call('DELETE', `/containers/${body.Id}?force=true`, undefined, {}, [404]);
  }
}

export async function removeBenchImage(client: EngineClient): Promise<void> {
  await client.call('DELETE', `/images/${encodeURIComponent(BENCH_IMAGE)}?force=true`, undefined, {}, [404, 409]);
}
