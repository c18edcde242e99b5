import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { Config } from '../config.js';
import { callAndPrint } from '../platform/http/client.js';
import { VERSION } from '../version.js';
import { workerIdProblem } from './worker-id.js';

interface WorkerCommandOptions {
  server?: string;
  workerId: string;
  apiKey?: string;
  maxConcurrentTasks: number;
  dataDir: string;
  skillsDir: string[];
  shutdownGraceSeconds: number;
  execution?: boolean;
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError(`expected a whole number of at least 1, got "${value}"`);
  return Number(value);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function fail(message: string, code: number): never {
  process.stderr.write(`hangar worker: ${message}\n`);
  process.exit(code);
}

/** `hangar worker ...` (run a self-hosted worker) and `hangar workers` (list the connected ones). */
export function registerWorkerCommands(program: Command): void {
  program
    .command('worker')
    .description(
      'run a self-hosted worker: executes the runs whose config.worker_host names --worker-id (see docs/worker-protocol.md)',
    )
    .option('--server <url>', 'the Hangar server, e.g. https://hangar.example (default: HANGAR_URL)')
    .option('--worker-id <id>', 'the name runs use in config.worker_host (not empty, not starting with "warp")')
    .option(
      '--execution',
      "a run pod's one execution (HANGAR_SANDBOX=kubernetes, docs/kubernetes.md): HANGAR_URL and HANGAR_EXECUTION_CREDENTIAL come from the pod",
    )
    .option(
      '--api-key <key>',
      'a worker key for this worker ID, from `hangar workers keys create` (default: HANGAR_API_KEY)',
    )
    .option('--max-concurrent-tasks <n>', 'tasks executed at once', positiveInteger, 1)
    .option('--data-dir <path>', 'where workspaces live', './.hangar-worker')
    .option('--skills-dir <path>', 'a directory searched for SKILL.md files to report (repeatable)', collect, [])
    .option(
      '--shutdown-grace-seconds <n>',
      'on SIGTERM, how long running tasks may take to finish before they are stopped',
      positiveInteger,
      60,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ HANGAR_API_KEY=<worker key> hangar worker --server https://hangar.example --worker-id build-box-1
  $ hangar worker --server http://127.0.0.1:8080 --worker-id gpu --api-key <worker key> --max-concurrent-tasks 2
`,
    )
    .action(async (options: WorkerCommandOptions) => {
      const server = options.server ?? process.env.HANGAR_URL;
      const apiKey = options.execution
        ? process.env.HANGAR_EXECUTION_CREDENTIAL
        : (options.apiKey ?? process.env.HANGAR_API_KEY);
      if (!server) fail('give --server or set HANGAR_URL', 2);
      if (!apiKey)
        fail(options.execution ? 'HANGAR_EXECUTION_CREDENTIAL is not set' : 'give --api-key or set HANGAR_API_KEY', 2);
      // A run pod's connection is named by its credential; the worker ID only fills the websocket's query.
      const workerId = options.execution ? 'kubernetes' : options.workerId;
      if (workerId === undefined) fail('give --worker-id', 2);
      const idProblem = workerIdProblem(workerId);
      if (idProblem) fail(idProblem, 2);
      // Loaded only here: the other verbs need neither the configuration's parsers, the logger, the tracing SDK nor
      // the executor (scripts/check-client-imports.mjs).
      const [{ ConfigError, loadConfig }, { pino }, { logContext }, { flushTracing, startTracing }] = await Promise.all(
        [
          import('../config.js'),
          import('pino'),
          import('../platform/log-context.js'),
          import('../platform/tracing.js'),
        ],
      );
      let config: Config;
      try {
        config = loadConfig({ ...process.env, HANGAR_DATA_DIR: path.resolve(options.dataDir) });
      } catch (error) {
        if (error instanceof ConfigError) fail(`configuration error: ${error.message}`, 2);
        throw error;
      }
      const log = pino({ level: config.logLevel, base: { worker: workerId }, mixin: logContext });
      // With the OTEL_* variables set, the worker's spans join each run's trace (its traceparent comes with the task).
      if (config.tracing) await startTracing(VERSION);
      // First, while this process is small: the worker's processes are forked by the spawner (issue 54).
      const { startSpawner, stopSpawner } = await import('../platform/spawn/index.js');
      startSpawner();
      const { Worker } = await import('./worker.js');
      const worker = new Worker({
        server,
        workerId,
        apiKey,
        maxConcurrentTasks: options.execution ? 1 : options.maxConcurrentTasks,
        config,
        skillDirs: options.skillsDir,
        log,
        // Past twice the lease the server has taken the run back: the pod's worker stops and its Job ends.
        ...(options.execution ? { oneShot: { giveUpAfterMs: 2 * config.runLeaseSeconds * 1000 } } : {}),
      });
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          // A second signal: the operator will not wait (for example for an unreachable server to take the reports).
          log.warn({ signal }, 'stopping now; running tasks are left to their leases');
          process.exit(1);
        }
        stopping = true;
        log.info({ signal }, 'stopping: no new tasks; running ones get the grace period');
        void worker.shutdown(options.shutdownGraceSeconds * 1000);
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
      try {
        await worker.run();
      } catch (error) {
        await flushTracing();
        fail((error as Error).message, 3);
      }
      await stopSpawner();
      await flushTracing();
      log.info('stopped');
    });

  const workers = program
    .command('workers')
    .description("the team's self-hosted workers: without a subcommand, the connected ones")
    .action(() => callAndPrint('GET', '/agent/connected-self-hosted-workers'));
  workers
    .command('list')
    .description("list the team's connected self-hosted workers")
    .action(() => callAndPrint('GET', '/agent/connected-self-hosted-workers'));

  const keys = workers
    .command('keys')
    .description('worker keys: the credential of `hangar worker` (team admins create and revoke them)');
  keys.command('list').action(() => callAndPrint('GET', '/selfhosted/worker-keys'));
  keys
    .command('create')
    .description('create a worker key (printed once) for one worker ID or a pattern such as "build-*"')
    .requiredOption('--worker-id <id_or_pattern>', 'the worker ID the key may connect as; * stands for any characters')
    .requiredOption('--name <name>', 'what the key is for, e.g. the machine')
    .action((options: { workerId: string; name: string }) =>
      callAndPrint('POST', '/selfhosted/worker-keys', { name: options.name, worker_id: options.workerId }),
    );
  keys
    .command('revoke')
    .description('revoke a worker key: refused at the next connect, and its open connections are closed')
    .argument('<key_uid>')
    .action((uid: string) => callAndPrint('DELETE', `/selfhosted/worker-keys/${encodeURIComponent(uid)}`));
}
