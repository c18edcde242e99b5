import type { Command } from 'commander';
import { callAndPrint } from '../platform/http/client.js';

/** The event kinds a `github` automation trigger names, for the automations' verbs (`--github`). */
export { GITHUB_EVENT_KINDS } from './triggers.js';

const segment = encodeURIComponent;

/** `hangar github ...`: an instance administrator links a team to GitHub App installations or a PAT secret. */
export function registerGitHubCommands(program: Command): void {
  const github = program.command('github').description("a team's GitHub links (instance administrators)");
  github
    .command('links')
    .argument('<team_uid>')
    .description("the team's installations and token secret")
    .action((team: string) => callAndPrint('GET', `/admin/teams/${segment(team)}/github`));
  github
    .command('link')
    .argument('<team_uid>')
    .option('--installation <id>', 'a GitHub App installation ID')
    .option('--token-secret <name>', 'a team secret holding a fine-grained personal access token')
    .description('link an installation (or a personal access token secret) to the team')
    .action((team: string, options: { installation?: string; tokenSecret?: string }) => {
      if ((options.installation === undefined) === (options.tokenSecret === undefined))
        throw new Error('give one of --installation or --token-secret');
      return options.installation !== undefined
        ? callAndPrint('PUT', `/admin/teams/${segment(team)}/github/installations/${segment(options.installation)}`)
        : callAndPrint('PUT', `/admin/teams/${segment(team)}/github/token-secret`, {
            secret_name: options.tokenSecret,
          });
    });
  github
    .command('allow')
    .argument('<team_uid>')
    .requiredOption('--installation <id>', 'the linked installation')
    .requiredOption('--login <login>', 'a GitHub login')
    .requiredOption('--user <user_uid>', "the team member the login's runs are created as")
    .description("let a GitHub login start runs from the installation's repositories without write access")
    .action((team: string, options: { installation: string; login: string; user: string }) =>
      callAndPrint(
        'PUT',
        `/admin/teams/${segment(team)}/github/installations/${segment(options.installation)}/allowed-logins/${segment(options.login)}`,
        { user_uid: options.user },
      ),
    );
  github
    .command('disallow')
    .argument('<team_uid>')
    .requiredOption('--installation <id>', 'the linked installation')
    .requiredOption('--login <login>', 'a GitHub login on its allow-list')
    .description("take a GitHub login off the installation's allow-list")
    .action((team: string, options: { installation: string; login: string }) =>
      callAndPrint(
        'DELETE',
        `/admin/teams/${segment(team)}/github/installations/${segment(options.installation)}/allowed-logins/${segment(options.login)}`,
      ),
    );
  github
    .command('unlink')
    .argument('<team_uid>')
    .option('--installation <id>', 'the installation to unlink')
    .option('--token-secret', 'stop using the personal access token')
    .action((team: string, options: { installation?: string; tokenSecret?: boolean }) => {
      if ((options.installation === undefined) === (options.tokenSecret === undefined))
        throw new Error('give one of --installation or --token-secret');
      return options.installation !== undefined
        ? callAndPrint('DELETE', `/admin/teams/${segment(team)}/github/installations/${segment(options.installation)}`)
        : callAndPrint('DELETE', `/admin/teams/${segment(team)}/github/token-secret`);
    });
}
