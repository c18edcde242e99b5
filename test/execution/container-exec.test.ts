import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxSpawnOptions } from '../../src/execution/sandbox/backend.js';
import { spawnInContainer } from '../../src/execution/sandbox/container/exec.js';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';

// A process in an execution's container waits for what must be in place before it (the API relay, which the
// container backend starts without waiting for it), and reports its failure as its own.
const { engines, skipReason } = testEngines();
const engine = engines[0];

describe('a process in a container', { skip: skipReason }, () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-container-exec-'));
  let containerId = '';
  before(async () => {
    const setsid = ['/usr/bin/setsid', '/bin/setsid'].find((candidate) => fs.existsSync(candidate))!;
    const { body } = await engine!.client.call<{ Id: string }>('POST', '/containers/create', {
      Image: BASE_IMAGE,
      Entrypoint: ['sleep'],
      Cmd: ['infinity'],
      HostConfig: {
        NetworkMode: 'none',
        Init: true,
        Binds: [`${directory}:/w:rw`, `${setsid}:/opt/hangar/bin/setsid:ro`],
      },
    });
    containerId = body.Id;
    await engine!.client.call('POST', `/containers/${containerId}/start`);
  });
  after(async () => {
    if (containerId) await engine!.client.call('DELETE', `/containers/${containerId}?force=true`, undefined, {}, [404]);
    fs.rmSync(directory, { recursive: true, force: true });
  });

  const options: SandboxSpawnOptions = {
    // spawnInContainer takes its target from its second argument; the mode is never read.
    mode: resolveSandboxMode('process').mode,
    argv: [],
    cwd: directory,
    env: {},
    hiddenPaths: [],
    allowNetwork: false,
    timeoutMs: 60_000,
    maxOutputBytes: 64 * 1024,
    keepStdinOpen: false,
  };
  const spawn = (ready: Promise<void>) => {
    const process = spawnInContainer(options, {
      client: engine!.client,
      containerId,
      argv: ['/bin/sh', '-c', 'cat /w/gate'],
      cwd: '/w',
      env: [],
      ready,
      limitPassed: async () => undefined,
    });
    const lines: string[] = [];
    process.onStdoutLine((line) => lines.push(line));
    process.onStderrLine((line) => lines.push(line));
    return { process, lines };
  };

  test('starts only once what it waits for is ready', async () => {
    // Ready half a second after the spawn, once the file the process reads is there: a process that started at once
    // would find no file.
    const ready = sleep(500).then(() => fs.writeFileSync(path.join(directory, 'gate'), 'open\n'));
    const { process, lines } = spawn(ready);
    const exit = await process.exited;
    assert.equal(exit.code, 0, lines.join('\n'));
    assert.deepEqual(lines, ['open']);
  });

  test('fails, saying why, when it never is', async () => {
    const { process, lines } = spawn(Promise.reject(new Error('the API relay in the container failed: it ended')));
    const exit = await process.exited;
    assert.equal(exit.code, 126);
    assert.deepEqual(lines, [
      'hangar sandbox: cannot run in the container: the API relay in the container failed: it ended',
    ]);
  });
});
