import { type Command, InvalidArgumentError } from 'commander';
import { type NetworkOptions, networkBody, networkWords, withNetworkOptions } from '../network/cli.js';
import { collect, examples, oneOf } from '../platform/cli/options.js';
import { say, show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { EnvironmentConfigBody, EnvironmentItem, SetupOnUpdate } from './schemas.js';
import type { ListAgentsResponse } from './skills/schemas.js';

function environmentsTable({ environments }: { environments: EnvironmentItem[] }): string {
  return table(
    environments,
    [
      { header: 'UID', value: (item) => item.uid },
      { header: 'NAME', value: (item) => item.config.name },
      { header: 'ACCESS', value: (item) => item.access },
      { header: 'IMAGE', value: (item) => item.config.docker_image },
      { header: 'REPOSITORIES', value: (item) => item.config.github_repos.map((repo) => `${repo.owner}/${repo.repo}`) },
      { header: 'SETUP NET', value: (item) => networkWords(item.config.network?.setup) },
      { header: 'AGENT NET', value: (item) => networkWords(item.config.network?.agent) },
      { header: 'RUNNER', value: (item) => item.config.default_runner_uid ?? '' },
      { header: 'UPDATED', value: (item) => item.last_updated },
      { header: 'BY', value: (item) => item.last_editor?.display_name ?? item.last_editor?.uid ?? '' },
    ],
    'No environments. Create one with `hangar environments create --name <name>`.',
  );
}

function minutes(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`--retention takes whole minutes, got "${value}"`);
  return Number(value);
}

const path = (uid: string, action = '') => `/environments/${encodeURIComponent(uid)}${action}`;

interface ConfigOptions extends NetworkOptions {
  name: string;
  description?: string;
  image?: string;
  repo: string[];
  setup: string[];
  retention?: number;
  setupOnUpdate?: SetupOnUpdate;
  pullRequest?: 'open' | 'draft' | 'off';
  defaultRunner?: string;
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
    ...(options.setupOnUpdate !== undefined ? { setup_on_update: options.setupOnUpdate } : {}),
    ...(options.pullRequest !== undefined ? { github: { pull_request: options.pullRequest } } : {}),
    ...(options.defaultRunner !== undefined ? { default_runner_uid: options.defaultRunner } : {}),
    ...(networkBody(options) as Pick<EnvironmentConfigBody, 'network'>),
  };
}

function withConfigOptions(command: Command): Command {
  return withNetworkOptions(command)
    .requiredOption('--name <name>', 'name of the environment')
    .option('--description <text>', 'what it is for')
    .option('--image <docker_image>', 'Docker image, e.g. ubuntu:24.04')
    .option('--repo <owner/repo>', 'GitHub repository to clone (repeatable)', collect, [])
    .option('--setup <command>', 'setup command, run in order (repeatable)', collect, [])
    .option('--default-runner <runner_uid>', 'runner its runs execute with unless the run or its agent names one')
    .option('--retention <minutes>', 'keep a failed setup for debugging this long (1-60)', minutes)
    .option(
      '--setup-on-update <when>',
      'run setup again when a run starts from a snapshot whose repositories moved on: always, never or ' +
        'when_lockfiles_change (the default)',
      oneOf('--setup-on-update', ['always', 'never', 'when_lockfiles_change']),
    )
    .option(
      '--pull-request <mode>',
      "what Hangar does with a SUCCEEDED run's changes unless the run says otherwise: open (the default), " +
        'draft or off',
      oneOf('--pull-request', ['open', 'draft', 'off']),
    );
}

/** `hangar environments ...` and `hangar skills list`: the environments API from the command line. */
export function registerEnvironmentCommands(program: Command): void {
  const environments = program.command('environments').description('manage environments and who they are shared with');
  environments
    .command('list')
    .description('list the environments your team owns or reaches')
    .option('--sort <order>', 'name or last_updated', oneOf('--sort', ['name', 'last_updated']), 'last_updated')
    .addHelpText('after', '\nExamples:\n  $ hangar environments list --sort name\n')
    .action(async (options: { sort: string }) => {
      const result = await callApi<{ environments: EnvironmentItem[] }>(
        clientOptionsFromEnv(),
        'GET',
        `/agent/environments?${new URLSearchParams({ sort_by: options.sort })}`,
      );
      show(result, environmentsTable);
    });
  environments
    .command('get')
    .description('show one environment')
    .argument('<uid>')
    .action(async (uid: string) => show(await callApi(clientOptionsFromEnv(), 'GET', path(uid))));
  examples(withConfigOptions(environments.command('create').description('create an environment')), [
    ['hangar environments create --name Backend --image node:22 --repo acme/api --setup "npm ci"', 'clone and set up'],
  ]).action(async (options: ConfigOptions) =>
    show(await callApi(clientOptionsFromEnv(), 'POST', '/environments', config(options))),
  );
  withConfigOptions(
    environments.command('update').description("replace an environment's config").argument('<uid>'),
  ).action(async (uid: string, options: ConfigOptions) =>
    show(await callApi(clientOptionsFromEnv(), 'PUT', path(uid), config(options))),
  );
  environments
    .command('delete')
    .description('delete an environment')
    .argument('<uid>')
    .action(async (uid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid));
      say(`Deleted environment ${uid}.`);
    });
  environments
    .command('share')
    .description('let another team use an environment')
    .argument('<uid>')
    .argument('<team_uid>')
    .action(async (uid: string, teamUid: string) =>
      show(await callApi(clientOptionsFromEnv(), 'POST', path(uid, '/guests'), { team_uid: teamUid })),
    );
  environments
    .command('unshare')
    .description("remove a team's access (added as a guest or joined with the link)")
    .argument('<uid>')
    .argument('<team_uid>')
    .action(async (uid: string, teamUid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid, `/guests/${encodeURIComponent(teamUid)}`));
      say(`Removed team ${teamUid} from environment ${uid}.`);
    });
  environments
    .command('share-link')
    .description('make a share link token (shown once; replaces the previous one)')
    .argument('<uid>')
    .action(async (uid: string) => show(await callApi(clientOptionsFromEnv(), 'POST', path(uid, '/share-link'))));
  environments
    .command('rebuild')
    .description("drop an environment's setup snapshots: its next run sets up from nothing (instance admins)")
    .argument('<uid>')
    .action(async (uid: string) =>
      show(await callApi(clientOptionsFromEnv(), 'POST', `/admin${path(uid, '/rebuild')}`)),
    );
  environments
    .command('join')
    .description('give your team access to the environment a share link token names')
    .argument('<token>')
    .action(async (token: string) =>
      show(await callApi(clientOptionsFromEnv(), 'POST', '/environments/join', { token })),
    );
  environments
    .command('trust')
    .description(
      "let your team's runs in an environment another team shares use your team's secrets (admins; its setup is the other team's code)",
    )
    .argument('<uid>')
    .action(async (uid: string) => show(await callApi(clientOptionsFromEnv(), 'POST', path(uid, '/trust'))));
  environments
    .command('untrust')
    .description("take that back: your team's runs in the environment get none of its secrets (admins)")
    .argument('<uid>')
    .action(async (uid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid, '/trust'));
      say(`Runs of your team in environment ${uid} get none of its secrets now.`);
    });

  program
    .command('skills')
    .description("agents (skills) found in your environments' repositories")
    .command('list')
    .description('list skills')
    .option('--repo <owner/repo>', 'only this repository')
    .option('--refresh', 'fetch the repositories again')
    .option('--sort <order>', 'name or last_run', oneOf('--sort', ['name', 'last_run']), 'name')
    .option('--include-malformed', 'also list SKILL.md files that could not be parsed')
    .addHelpText('after', '\nExamples:\n  $ hangar skills list --repo acme/ops --refresh\n')
    .action(async (options: { repo?: string; refresh?: boolean; sort: string; includeMalformed?: boolean }) => {
      const params = new URLSearchParams({ sort_by: options.sort });
      if (options.repo) params.set('repo', options.repo);
      if (options.refresh) params.set('refresh', 'true');
      if (options.includeMalformed) params.set('include_malformed_skills', 'true');
      const result = await callApi<ListAgentsResponse>(clientOptionsFromEnv(), 'GET', `/agent?${params}`);
      show(result, ({ agents }) =>
        table(
          agents.flatMap((agent) => agent.variants.map((variant) => ({ name: agent.name, ...variant }))),
          [
            { header: 'SKILL', value: (row) => row.name },
            { header: 'SPEC', value: (row) => row.id },
            { header: 'DESCRIPTION', value: (row) => (row.error ? `MALFORMED: ${row.error}` : row.description) },
          ],
          "No skills found in your environments' repositories.",
        ),
      );
    });
}
