// The spawner against real processes: what a caller sees is what Node's own spawn would give it, and the spawner's
// death and the server's are handled as the sandbox's guarantees need (issue 54).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  execFileAsync,
  type StartedProcess,
  spawnProcess,
  started,
  startSpawner,
  stopSpawner,
} from '../../src/platform/spawn/index.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

const spawner = startSpawner();
after(() => stopSpawner());

async function collect(
  child: StartedProcess,
): Promise<{ stdout: string; stderr: string; code: number | null; signal: string | null }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk));
  const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
  return { stdout, stderr, code, signal };
}

test('a process started by the spawner: output, exit status, stdin and an extra descriptor', async () => {
  const child = spawnProcess('/bin/sh', ['-c', 'cat; cat <&3; echo err >&2; exit 3'], {
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  const pid = await started(child);
  assert.ok(pid > 0 && pid !== process.pid && pid !== spawner.pid);
  child.stdin!.end('from stdin\n');
  (child.stdio[3] as NodeJS.WritableStream).end('from fd 3\n');
  const result = await collect(child);
  assert.deepEqual(result, { stdout: 'from stdin\nfrom fd 3\n', stderr: 'err\n', code: 3, signal: null });
  assert.equal(child.exitCode, 3);
});

test('output far larger than the channel holds arrives whole and in order', async () => {
  const child = spawnProcess('/bin/sh', ['-c', 'seq 1 400000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { stdout, code } = await collect(child);
  assert.equal(code, 0);
  const lines = stdout.trimEnd().split('\n');
  assert.equal(lines.length, 400000);
  assert.equal(lines[0], '1');
  assert.equal(lines.at(-1), '400000');
});

test('a command that does not exist fails to start with ENOENT, as with Node spawn', async () => {
  const child = spawnProcess('/nonexistent/program', []);
  await assert.rejects(started(child), (error: NodeJS.ErrnoException) => error.code === 'ENOENT');
  await assert.rejects(
    execFileAsync('/nonexistent/program', []),
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  );
});

test('kill signals the process; a detached one leads its own group, signalled by the negative pid', async () => {
  const child = spawnProcess('/bin/sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore'] });
  await started(child);
  assert.equal(child.kill('SIGTERM'), true);
  const [, signal] = await once(child, 'exit');
  assert.equal(signal, 'SIGTERM');

  const group = spawnProcess('/bin/sh', ['-c', 'sleep 30 & wait'], {
    detached: true,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const leader = await started(group);
  process.kill(-leader, 'SIGKILL');
  const [, groupSignal] = await once(group, 'exit');
  assert.equal(groupSignal, 'SIGKILL');
});

test('a kill before the spawner has reported the pid reaches the process, as with Node spawn', async () => {
  const child = spawnProcess('/bin/sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore'] });
  assert.equal(child.pid, undefined);
  assert.equal(child.kill('SIGTERM'), true);
  const [, signal] = await once(child, 'exit');
  assert.equal(signal, 'SIGTERM');
  // The same through execFileAsync: an abort before the start is acknowledged ends the process.
  const abort = new AbortController();
  const running = execFileAsync('/bin/sleep', ['30'], { signal: abort.signal });
  abort.abort();
  await assert.rejects(running, { code: 'ABORT_ERR', killed: true, signal: 'SIGTERM' });
});

test("destroying the server's side of a pipe closes the process's, as closing a ChildProcess's pipe does", async () => {
  // A process waiting to read (bwrap on its network hold) sees end of file...
  const reader = spawnProcess('/bin/sh', ['-c', 'cat <&3 >/dev/null; echo eof'], {
    stdio: ['ignore', 'pipe', 'ignore', 'pipe'],
  });
  await started(reader);
  (reader.stdio[3] as NodeJS.WritableStream & { destroy(): void }).destroy();
  const read = await collect(reader);
  assert.deepEqual([read.stdout, read.code], ['eof\n', 0]);
  // ...and one writing (an escaped process holding the output pipe) gets EPIPE, and the process closes.
  const writer = spawnProcess('/bin/sh', ['-c', 'while echo x; do :; done; exit 7'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await once(writer.stdout!, 'data');
  writer.stdout!.destroy();
  const [code, signal] = (await once(writer, 'close')) as [number | null, string | null];
  // Killed by SIGPIPE, or (SIGPIPE ignored) its echo failed with EPIPE and ended the loop.
  assert.ok(signal === 'SIGPIPE' || code === 7, `ended with ${code ?? signal}`);
});

test('execFileAsync writes its input to stdin and closes it', async () => {
  assert.equal((await execFileAsync('/bin/cat', [], { input: 'given\n' })).stdout, 'given\n');
});

test('execFileAsync answers as promisify(execFile): output, and a failed exit with code, stdout and stderr', async () => {
  assert.deepEqual(await execFileAsync('/bin/sh', ['-c', 'echo out; echo err >&2']), {
    stdout: 'out\n',
    stderr: 'err\n',
  });
  const bytes = await execFileAsync('/bin/sh', ['-c', 'printf "\\001\\002"'], { encoding: 'buffer' });
  assert.deepEqual([...bytes.stdout], [1, 2]);
  await assert.rejects(
    execFileAsync('/bin/sh', ['-c', 'echo partial; echo bad >&2; exit 4']),
    (error: Record<string, unknown>) => {
      assert.equal(error.code, 4);
      assert.equal(error.stdout, 'partial\n');
      assert.equal(error.stderr, 'bad\n');
      assert.equal(error.killed, false);
      return true;
    },
  );
  await assert.rejects(execFileAsync('/bin/sleep', ['30'], { timeout: 50 }), (error: Record<string, unknown>) => {
    assert.equal(error.killed, true);
    assert.equal(error.signal, 'SIGTERM');
    return true;
  });
  await assert.rejects(execFileAsync('/bin/sh', ['-c', 'seq 1 100000'], { maxBuffer: 1000 }), {
    code: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
  });
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-spawn-'));
  assert.equal(
    (await execFileAsync('/bin/pwd', [], { cwd, env: { PATH: '/usr/bin:/bin' } })).stdout.trim(),
    fs.realpathSync(cwd),
  );
  fs.rmSync(cwd, { recursive: true });
});

test('when the spawner dies, what it started is killed and ends as killed; the next spawn starts a new spawner', async () => {
  const child = spawnProcess('/bin/sleep', ['30'], { detached: true, stdio: ['ignore', 'ignore', 'ignore'] });
  const pid = await started(child);
  const starts = spawner.starts;
  process.kill(spawner.pid!, 'SIGKILL');
  const [, signal] = await once(child, 'exit');
  assert.equal(signal, 'SIGKILL');
  assert.equal((child as { lostWithSpawner?: boolean }).lostWithSpawner, true);
  // Gone, or a zombie until init reaps it (its parent, the spawner, died): not running either way.
  const state = fs.existsSync(`/proc/${pid}/stat`)
    ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0]
    : 'gone';
  assert.ok(state === 'gone' || state === 'Z', `the process is still ${state}`);
  assert.equal((await execFileAsync('/bin/echo', ['again'])).stdout, 'again\n');
  assert.equal(spawner.starts, starts + 1);
});

test("the spawner exits with its server, so a pipe to the server's side closes (what the sandbox watchdog waits on)", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-spawn-death-'));
  const marker = path.join(dir, 'eof');
  const script = path.join(dir, 'server.mts');
  fs.writeFileSync(
    script,
    `import { spawnProcess, started, startSpawner } from ${JSON.stringify(new URL('../../src/platform/spawn/index.ts', import.meta.url).pathname)};
startSpawner();
const child = spawnProcess('/bin/sh', ['-c', 'cat >/dev/null; touch ${marker}'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
await started(child);
console.log('ready');
setInterval(() => undefined, 1000);
`,
  );
  const server = spawn(process.execPath, [...HANGAR_FROM_SOURCES.slice(0, 2), script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(server.stdout, 'data');
  const watcher = fs.watch(dir);
  server.kill('SIGKILL');
  while (!fs.existsSync(marker)) await once(watcher, 'change');
  watcher.close();
  fs.rmSync(dir, { recursive: true });
});
