import { InvalidArgumentError, type Command } from 'commander';
import { callApi, clientOptionsFromEnv, printJson as print } from '../platform/http/client.js';
import type { EnvironmentConfigBody, EnvironmentItem } from './schemas.js';
import type { ListAgentsResponse } from './skills/schemas.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function minutes(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`--retention takes whole minutes, got "${value}"`);
  return Number(value);
}

const path = (uid: string, action = '') => `/environments/${encodeURIComponent(uid)}${action}`;

interface ConfigOptions {
  name: string;
  description?: string;
  image?: string;
  repo: string[];
  setup: string[];
  retention?: number;
}

function config(options: ConfigOptions): EnvironmentConfigBody {
  return {
    name: options.name,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.image !== undefined ? { docker_image: options.image } : {}),
    github_repos: options.repo.map((spec) => {
      const [owner, repo, extra] = spec.split('/');
      if (!owner || !repo || extra !== undefined)
        throw new InvalidArgumentError(`--repo takes owner/repo, got "${spec}"`);
      return { owner, repo };
    }),
    setup_commands: options.setup,
    ...(options.retention !== undefined ? { failure_session_retention_minutes: options.retention } : {}),
  };
}

function withConfigOptions(command: Command): Command {
  return command
    .requiredOption('--name <name>', 'name of the environment')
    .option('--description <text>', 'what it is for')
    .option('--image <docker_image>', 'Docker image, e.g. ubuntu:24.04')
    .option('--repo <owner/repo>', 'GitHub repository to clone (repeatable)', collect, [])
    .option('--setup <command>', 'setup command, run in order (repeatable)', collect, [])
    .option('--retention <minutes>', 'keep a failed setup for debugging this long (1-60)', minutes);
}

/** `hangar environments ...` and `hangar skills list`: the environments API from the command line. */
export function registerEnvironmentCommands(program: Command): void {
  const environments = program.command('environments').description('manage environments and who they are shared with');
  environments
    .command('list')
    .description('list the environments your team owns or reaches')
    .option('--sort <order>', 'name or last_updated', 'last_updated')
    .option('--json', 'print the raw response')
    .action(async (options: { sort: string; json?: boolean }) => {
      const result = await callApi<{ environments: EnvironmentItem[] }>(
        clientOptionsFromEnv(),
        'GET',
        `/agent/environments?${new URLSearchParams({ sort_by: options.sort })}`,
      );
      if (options.json) return print(result);
      for (const item of result.environments) {
        const repos = item.config.github_repos.map((repo) => `${repo.owner}/${repo.repo}`).join(',');
        process.stdout.write(
          `${item.uid}  ${item.access.padEnd(5)}  ${item.last_updated}  ${item.config.name}${repos ? `  (${repos})` : ''}\n`,
        );
      }
    });
  environments
    .command('get')
    .description('show one environment')
    .argument('<uid>')
    .action(async (uid: string) => print(await callApi(clientOptionsFromEnv(), 'GET', path(uid))));
  withConfigOptions(environments.command('create').description('create an environment')).action(
    async (options: ConfigOptions) =>
      print(await callApi(clientOptionsFromEnv(), 'POST', '/environments', config(options))),
  );
  withConfigOptions(
    environments.command('update').description("replace an environment's config").argument('<uid>'),
  ).action(async (uid: string, options: ConfigOptions) =>
    print(await callApi(clientOptionsFromEnv(), 'PUT', path(uid), config(options))),
  );
  environments
    .command('delete')
    .description('delete an environment')
    .argument('<uid>')
    .action(async (uid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid));
      process.stdout.write(`deleted ${uid}\n`);
    });
  environments
    .command('share')
    .description('let another team use an environment')
    .argument('<uid>')
    .argument('<team_uid>')
    .action(async (uid: string, teamUid: string) =>
      print(await callApi(clientOptionsFromEnv(), 'POST', path(uid, '/guests'), { team_uid: teamUid })),
    );
  environments
    .command('unshare')
    .description("remove a team's access (added as a guest or joined with the link)")
    .argument('<uid>')
    .argument('<team_uid>')
    .action(async (uid: string, teamUid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid, `/guests/${encodeURIComponent(teamUid)}`));
      process.stdout.write(`removed ${teamUid} from ${uid}\n`);
    });
  environments
    .command('share-link')
    .description('make a share link token (shown once; replaces the previous one)')
    .argument('<uid>')
    .action(async (uid: string) => print(await callApi(clientOptionsFromEnv(), 'POST', path(uid, '/share-link'))));
  environments
    .command('join')
    .description('give your team access to the environment a share link token names')
    .argument('<token>')
    .action(async (token: string) =>
      print(await callApi(clientOptionsFromEnv(), 'POST', '/environments/join', { token })),
    );

  program
    .command('skills')
    .description("agents (skills) found in your environments' repositories")
    .command('list')
    .description('list skills')
    .option('--repo <owner/repo>', 'only this repository')
    .option('--refresh', 'fetch the repositories again')
    .option('--sort <order>', 'name or last_run', 'name')
    .option('--include-malformed', 'also list SKILL.md files that could not be parsed')
    .option('--json', 'print the raw response')
    .action(
      async (options: {
        repo?: string;
        refresh?: boolean;
        sort: string;
        includeMalformed?: boolean;
        json?: boolean;
      }) => {
        const params = new URLSearchParams({ sort_by: options.sort });
        if (options.repo) params.set('repo', options.repo);
        if (options.refresh) params.set('refresh', 'true');
        if (options.includeMalformed) params.set('include_malformed_skills', 'true');
        const result = await callApi<ListAgentsResponse>(clientOptionsFromEnv(), 'GET', `/agent?${params}`);
        if (options.json) return print(result);
        for (const agent of result.agents) {
          for (const variant of agent.variants) {
            const note = variant.error ? `  MALFORMED: ${variant.error}` : `  ${variant.description}`;
            process.stdout.write(`${agent.name}  ${variant.id}${note}\n`);
          }
        }
      },
    );
}
