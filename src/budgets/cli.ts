import type { Command } from 'commander';
import { callAndPrint } from '../platform/http/client.js';

const segment = encodeURIComponent;

/** `hangar admin budgets ...` (instance administrators) and `hangar team spend` (any member). */
export function registerBudgetCommands(program: Command): void {
  const admin =
    program.commands.find((command) => command.name() === 'admin') ??
    program.command('admin').description('instance administration');
  const budgets = admin.command('budgets').description("teams' monthly budgets and this month's spend");
  budgets
    .command('get')
    .argument('<team_uid>')
    .action((team: string) => callAndPrint('GET', `/admin/teams/${segment(team)}/budget`));
  budgets
    .command('set')
    .argument('<team_uid>')
    .requiredOption('--usd <amount>', 'monthly budget in USD', Number)
    .option('--warn-at <percent>', 'share of the budget from which it warns (default 80)', Number)
    .action((team: string, options: { usd: number; warnAt?: number }) =>
      callAndPrint('PUT', `/admin/teams/${segment(team)}/budget`, {
        monthly_budget_usd: options.usd,
        ...(options.warnAt !== undefined ? { warn_at_percent: options.warnAt } : {}),
      }),
    );
  budgets
    .command('clear')
    .argument('<team_uid>')
    .action((team: string) => callAndPrint('DELETE', `/admin/teams/${segment(team)}/budget`));
  program
    .command('spend')
    .description("your team's spend this month and its budget")
    .action(() => callAndPrint('GET', '/team/spend'));
}
