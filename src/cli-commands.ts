import type { Command } from 'commander';
import { registerDoctorCommand } from './app/doctor-cli.js';
import { registerAuditCommands } from './audit/index.js';
import { registerAutomationCommands } from './automations/index.js';
import { registerBudgetCommands } from './budgets/index.js';
import { registerGitHubCommands } from './github/index.js';
import { registerEnvironmentCommands } from './environments/index.js';
import { registerFactoryCommands } from './factory/index.js';
import { registerIdentityCommands } from './identities/index.js';
import { registerMcpServerCommands } from './mcp/index.js';
import { registerModelCommands } from './models/index.js';
import { completionScript, SHELLS, type Shell } from './platform/cli/completion.js';
import { oneOf } from './platform/cli/options.js';
import { addOutputOptions } from './platform/cli/output.js';
import { registerRunCommands } from './runs/index.js';
import { registerScheduleCommands } from './schedules/index.js';
import { registerSecretCommands } from './secrets/index.js';
import { registerWebhookCommands } from './webhooks/index.js';
import { registerWorkerCommands } from './workers/index.js';

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
  registerWorkerCommands(program);
  registerWebhookCommands(program);
  registerAutomationCommands(program);
  registerFactoryCommands(program);
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

  // Last, so that every verb above gets --json, --output and an example.
  addOutputOptions(program, [program.commands.find((command) => command.name() === 'workers')!]);
}
