#!/usr/bin/env node
import fs from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { formatStatus } from './app/status-text.js';
import { registerClientCommands } from './cli-commands.js';
import type { Config } from './config.js';
import { withProgress } from './platform/cli/progress.js';
import { DataDirLockedError } from './platform/db/lock-file.js';
import type { Role, RunningServer } from './server.js';
import { VERSION } from './version.js';

function fail(message: string, code = 1): never {
  process.stderr.write(`hangar: ${message}\n`);
  process.exit(code);
}

async function serve(options: { role: Role }): Promise<void> {
  // Loaded only here, like the server: the configuration's parsers (the operator file's schemas among them) are the
  // server's, and a client verb would pay for them at every start (scripts/check-client-imports.mjs).
  const { ConfigError, loadConfig } = await import('./config.js');
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`, 2);
    throw error;
  }
  let server: RunningServer;
  try {
    // Loaded only here: the client verbs need none of the server, and start faster without it.
    const { startServer } = await import('./server.js');
    const { pgliteDirectory } = await import('./platform/db/connect.js');
    // The first start creates the embedded database, which takes a while: the wait is said, not silent.
    const firstStart = !config.databaseUrl && !fs.existsSync(pgliteDirectory(config.dataDir));
    const starting = startServer(config, { role: options.role });
    server = firstStart
      ? await withProgress(
          `Creating the embedded database in ${pgliteDirectory(config.dataDir)} (first start only)`,
          starting,
        )
      : await starting;
  } catch (error) {
    if (error instanceof DataDirLockedError) fail(error.message, 3);
    fail(`could not start: ${(error as Error).message}`);
  }
  if (server.bootstrap.generatedKey) {
    // Printed once, on the first start only; also kept (mode 0600) in the data directory.
    process.stdout.write(
      `\nHangar created team "default" and an admin API key (shown once; also in ${server.bootstrap.keyFile}):\n\n` +
        `  ${server.bootstrap.generatedKey}\n\n`,
    );
  }
  // One summary of what this instance is (issue 26): readable on a terminal, one log line otherwise.
  const { instanceSummary } = await import('./app/status.js');
  const summary = instanceSummary(server.config, config.publicUrlExplicit ? config.publicUrl : server.url);
  if (config.logFormat === 'pretty')
    process.stdout.write(`\nHangar ${VERSION} is serving (role ${options.role})\n${formatStatus({ summary })}\n`);
  else server.app.log.info({ url: server.url, role: options.role, version: VERSION, ...summary }, 'Hangar is serving');
  const shutdown = (signal: string) => {
    server.app.log.info({ signal }, 'shutting down');
    server.stop().then(
      () => process.exit(0),
      (error) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

const program = new Command('hangar')
  .description('Hangar: run coding agents on your own infrastructure')
  .version(VERSION)
  .showHelpAfterError();

program
  .command('serve')
  .description(
    'run the API server and the engine loops (configured by environment variables; see docs/configuration.md)',
  )
  .addOption(
    new Option(
      '--role <role>',
      'api: HTTP API and worker connections; engine: the background loops (engine, scheduler, automations, webhook retention); all: both',
    )
      .choices(['api', 'engine', 'all'] satisfies Role[])
      .default('all'),
  )
  .action(serve);

registerClientCommands(program);

program.parseAsync().catch((error: unknown) => {
  if (error instanceof InvalidArgumentError) fail(error.message, 2);
  fail((error as Error).message);
});
