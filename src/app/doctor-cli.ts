import type { Command } from 'commander';
import { show } from '../platform/cli/output.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { InstanceStatus } from './status.js';
import { formatStatus } from './status-text.js';

/**
 * `hangar doctor`: the instance's summary and checks (issue 26), read from this machine's configuration (the same
 * environment `hangar serve` reads), or with --remote from a running server's `GET /admin/status`. Exits 1 when a
 * check fails.
 */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      "check this machine's Hangar setup: sandbox, harnesses, model keys, workspace directory, git host; exit 1 if a check fails",
    )
    .option('--remote', "ask the server at HANGAR_URL instead (GET /admin/status, an administrator's API key)")
    .addHelpText(
      'after',
      '\nExamples:\n  $ HANGAR_CONFIG=examples/hangar.yaml hangar doctor\n  $ hangar doctor --remote --json\n',
    )
    .action(async (options: { remote?: boolean }) => {
      let status: InstanceStatus;
      if (options.remote) status = await callApi<InstanceStatus>(clientOptionsFromEnv(), 'GET', '/admin/status');
      else {
        // Loaded only here: the other client verbs need none of the server's modules (scripts/check-client-imports.mjs).
        const [{ loadConfig }, { instanceStatus }] = await Promise.all([import('../config.js'), import('./status.js')]);
        status = await instanceStatus(loadConfig());
      }
      show(status, (answer) => `Hangar\n${formatStatus(answer)}`);
      if (status.checks.some((check) => !check.ok)) process.exitCode = 1;
    });
}
