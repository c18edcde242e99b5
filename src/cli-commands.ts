import type { Command } from 'commander';
import { registerDoctorCommand } from './app/doctor-cli.js';
import { registerAuditCommands } from './audit/cli.js';
import { registerAutomationCommands } from './automations/cli.js';
import { registerBudgetCommands } from './budgets/cli.js';
import { registerEnvironmentCommands } from './environments/cli.js';
import { registerFactoryCommands } from './factory/cli.js';
import { registerGitHubCommands } from './github/cli.js';
import { registerIdentityCommands } from './identities/cli.js';
import { registerMcpServerCommands } from './mcp/cli.js';
import { registerMessageCommands } from './messages/cli.js';
import { registerModelCommands } from './models/cli.js';
import { completionScript, ID_KINDS, type IdKind, SHELLS, type Shell } from './platform/cli/completion.js';
import { examples, oneOf } from './platform/cli/options.js';
import { addOutputOptions } from './platform/cli/output.js';
import { callApi, clientOptionsFromEnv } from './platform/http/client.js';
import { registerRunnerCommands } from './runners/cli.js';
import { registerRunCommands } from './runs/cli.js';
import { registerScheduleCommands } from './schedules/cli.js';
import { registerSecretCommands } from './secrets/cli.js';
import { registerWebhookCommands } from './webhooks/cli.js';
import { registerWorkerCommands } from './workers/cli.js';

/**
 * Every `hangar` verb besides `serve`: the slices' own verbs, `completion`, and then `--json` / `--output` and
 * examples for each (platform/cli/output.ts). Kept apart from main.ts so that a test can build the whole tree
 * without running it.
 */
export function registerClientCommands(program: Command): void {
  registerRunCommands(program);
  registerScheduleCommands(program);
  registerEnvironmentCommands(program);
  registerIdentityCommands(program);
  registerBudgetCommands(program);
  registerGitHubCommands(program);
  registerAuditCommands(program);
  registerSecretCommands(program);
  registerMcpServerCommands(program);
  registerRunnerCommands(program);
  registerWorkerCommands(program);
  registerWebhookCommands(program);
  registerAutomationCommands(program);
  registerFactoryCommands(program);
  registerMessageCommands(program);
  registerModelCommands(program);
  registerDoctorCommand(program);

  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish', oneOf('shell', SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ eval "$(hangar completion bash)"                                  # in ~/.bashrc
  $ eval "$(hangar completion zsh)"                                   # in ~/.zshrc
  $ hangar completion fish > ~/.config/fish/completions/hangar.fish
`,
    )
    .action((shell: Shell) => {
      process.stdout.write(completionScript(program, shell));
    });

  // What the completion scripts call for IDs: one line each, and nothing at all when the server cannot answer (a
  // tab press shows no error). Hidden: not a verb for people.
  examples(
    program
      .command('__complete', { hidden: true })
      .description('list IDs for shell completion')
      .argument('<kind>', ID_KINDS.join(' or '), oneOf('kind', ID_KINDS)),
    [['hangar __complete runs', "the team's recent run IDs, one a line"]],
  ).action(async (kind: IdKind) => {
    const ids = await completionIds(kind).catch(() => []);
    if (ids.length > 0) process.stdout.write(`${ids.join('\n')}\n`);
  });

  // Last, so that every verb above gets --json, --output and an example.
  addOutputOptions(program, [program.commands.find((command) => command.name() === 'workers')!]);
}

/** The team's 50 most recently updated runs, or its environments. */
async function completionIds(kind: IdKind): Promise<string[]> {
  const client = clientOptionsFromEnv();
  if (kind === 'runs') {
    const page = await callApi<{ runs: { run_id: string }[] }>(client, 'GET', '/agent/runs?limit=50');
    return page.runs.map((run) => run.run_id);
  }
  const list = await callApi<{ environments: { uid: string }[] }>(client, 'GET', '/agent/environments');
  return list.environments.map((environment) => environment.uid);
}
