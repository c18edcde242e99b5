import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { SandboxedProcess, SandboxSpawnOptions } from '../backend.js';
import { ProcessOutput } from '../process-output.js';
import { ProcessTree, type TreeEnd } from '../process-tree.js';
import { demultiplex, type EngineClient } from './engine-client.js';

/** What an exec needs of its execution's container. */
export interface ExecTarget {
  client: EngineClient;
  containerId: string;
  /** The argv, cwd and environment as the container sees them (workspace and runtime paths translated). */
  argv: string[];
  cwd: string;
  env: string[];
  /** After a failed exit: the limit the container's counters say was passed, if any. */
  limitPassed: () => Promise<string | undefined>;
  /** What must be in place in the container before the process starts (the API relay); its failure is the process's. */
  ready?: Promise<void>;
}

/**
 * Each exec's process starts in a session of its own (setsid, from Hangar's runtime) and leaves its process group's
 * id in the container's /tmp, so a kill reaches its whole tree and nothing else in the container (an oz run's MCP
 * servers run beside its commands). The Engine API has no way to signal one exec.
 */
const LAUNCH = 'echo $$ > "/tmp/.hangar-exec-$0" && exec "$@"';
const SIGNAL_GROUP = 'p=$(cat "/tmp/.hangar-exec-$0" 2>/dev/null) && [ -n "$p" ] && kill -s "$1" -- "-$p"';

/** A process in the execution's container, with the same contract as every backend's (process-tree.ts). */
export function spawnInContainer(options: SandboxSpawnOptions, target: ExecTarget): SandboxedProcess {
  const { client, containerId } = target;
  const token = randomBytes(8).toString('hex');
  const output = new ProcessOutput(options.maxOutputBytes);
  let input: NodeJS.WritableStream | undefined;

  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const flushStdout = output.read(stdout, 'stdout');
  const flushStderr = output.read(stderr, 'stderr');

  // A signal waits for the exec to run (or to fail to start): before then there is nothing to signal.
  const tree = new ProcessTree(
    output,
    async (name) => {
      const signalName = name === 'SIGTERM' ? 'TERM' : 'KILL';
      const signalled = await runQuietly(client, containerId, ['/bin/sh', '-c', SIGNAL_GROUP, token, signalName]).then(
        () => true,
        () => false,
      );
      // No exec can start (the container is at its process limit, or stopped): the whole container is killed, which
      // is the only way left to end the process. Its execution cannot run anything more in it anyway.
      if (!signalled && name === 'SIGKILL' && tree.state !== 'gone')
        await client
          .call('POST', `/containers/${containerId}/kill?signal=KILL`, undefined, {}, [404, 409])
          .catch(() => undefined);
    },
    options.timeoutMs,
  );

  const finish = (end: TreeEnd) => {
    if (tree.state === 'gone') return;
    tree.gone();
    stdout.end();
    stderr.end();
    // The PassThroughs deliver their last chunks on the next ticks.
    setImmediate(() => {
      flushStdout();
      flushStderr();
      tree.settle(end);
    });
  };

  const run = async () => {
    await target.ready;
    const attachStdin = options.keepStdinOpen || options.stdinText !== undefined;
    const exec = await client.call<{ Id: string }>('POST', `/containers/${containerId}/exec`, {
      Cmd: ['/opt/hangar/bin/setsid', '-w', '/bin/sh', '-c', LAUNCH, token, ...target.argv],
      Env: target.env,
      WorkingDir: target.cwd,
      AttachStdin: attachStdin,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const streams = await client.hijack(`/exec/${exec.body.Id}/start`, { Detach: false, Tty: false });
    tree.running();
    const ended = new Promise<void>((resolve) => {
      streams.output.once('end', resolve);
      streams.output.once('close', resolve);
      streams.output.once('error', () => resolve());
    });
    demultiplex(
      streams.output,
      (chunk) => stdout.write(chunk),
      (chunk) => stderr.write(chunk),
    );
    if (attachStdin && streams.input) {
      input = streams.input;
      streams.input.on('error', () => undefined);
      if (options.stdinText !== undefined) streams.input.write(options.stdinText);
      if (!options.keepStdinOpen) streams.input.end();
    }
    await ended;
    input = undefined;
    streams.output.destroy();
    const code = await exitCode(client, exec.body.Id);
    const limitExceeded = code !== 0 && !tree.signalled ? await target.limitPassed() : undefined;
    finish({ ...tree.classify(code), ...(limitExceeded ? { limitExceeded } : {}) });
  };
  void run()
    .catch((error: Error) => {
      // Later, so that the caller's listeners (set after this returns) hear why.
      setImmediate(() => {
        output.stderr(`hangar sandbox: cannot run in the container: ${error.message}`);
        finish({ code: 126, signal: null });
      });
    })
    .finally(() => tree.running());

  return {
    pid: 0,
    onStdoutLine: output.onStdoutLine,
    onStderrLine: output.onStderrLine,
    write(text) {
      if (tree.state === 'gone' || !input) return false;
      input.write(text);
      return true;
    },
    exited: output.exited,
    kill: (graceMs) => tree.kill(graceMs),
  };
}

/** An exec's exit code once the engine has it (Podman may still say Running for a moment after the stream ends). */
async function exitCode(client: EngineClient, execId: string): Promise<number | null> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const { body } = await client.call<{ Running: boolean; ExitCode: number | null }>('GET', `/exec/${execId}/json`);
    if (!body.Running) return body.ExitCode;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}

/** Runs a short command in the container and returns its stdout (the kill of an exec, the limits probe). */
export async function runQuietly(client: EngineClient, containerId: string, argv: string[]): Promise<string> {
  const exec = await client.call<{ Id: string }>('POST', `/containers/${containerId}/exec`, {
    Cmd: argv,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const { output } = await client.hijack(`/exec/${exec.body.Id}/start`, { Detach: false, Tty: false });
  const chunks: Buffer[] = [];
  demultiplex(
    output,
    (chunk) => chunks.push(chunk),
    () => undefined,
  );
  await new Promise<void>((resolve) => {
    output.once('end', resolve);
    output.once('close', resolve);
    output.once('error', () => resolve());
  });
  output.destroy();
  return Buffer.concat(chunks).toString('utf8');
}
