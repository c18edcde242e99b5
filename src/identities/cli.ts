import type { Command } from 'commander';
import { callAndPrint } from '../platform/http/client.js';

const segment = encodeURIComponent;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `hangar admin ...` (instance administrators) and `hangar agents ...` (a team's agent identities). */
export function registerIdentityCommands(program: Command): void {
  const admin = program.command('admin').description('instance administration: teams, users, memberships, API keys');

  const teams = admin.command('teams').description('teams');
  teams.command('list').action(() => callAndPrint('GET', '/admin/teams'));
  teams
    .command('create')
    .argument('<name>')
    .action((name: string) => callAndPrint('POST', '/admin/teams', { name }));

  const users = admin.command('users').description('users');
  users.command('list').action(() => callAndPrint('GET', '/admin/users'));
  users
    .command('create')
    .requiredOption('--name <display_name>', 'display name')
    .option('--email <email>', 'email address')
    .option('--admin', 'make the user an instance administrator')
    .action((options: { name: string; email?: string; admin?: boolean }) =>
      callAndPrint('POST', '/admin/users', {
        display_name: options.name,
        ...(options.email ? { email: options.email } : {}),
        is_admin: Boolean(options.admin),
      }),
    );

  const members = admin.command('members').description('team memberships');
  members
    .command('list')
    .argument('<team_uid>')
    .action((team: string) => callAndPrint('GET', `/admin/teams/${segment(team)}/members`));
  members
    .command('set')
    .description('add a user to a team, or change their role')
    .argument('<team_uid>')
    .argument('<user_uid>')
    .option('--role <role>', 'admin or member', 'member')
    .action((team: string, user: string, options: { role: string }) =>
      callAndPrint('PUT', `/admin/teams/${segment(team)}/members/${segment(user)}`, { role: options.role }),
    );
  members
    .command('remove')
    .argument('<team_uid>')
    .argument('<user_uid>')
    .action((team: string, user: string) =>
      callAndPrint('DELETE', `/admin/teams/${segment(team)}/members/${segment(user)}`),
    );

  const keys = admin.command('keys').description('API keys');
  keys
    .command('list')
    .option('--user <user_uid>')
    .option('--agent <agent_uid>')
    .action((options: { user?: string; agent?: string }) => {
      const query = new URLSearchParams({
        ...(options.user ? { user_uid: options.user } : {}),
        ...(options.agent ? { agent_uid: options.agent } : {}),
      });
      return callAndPrint('GET', `/admin/api-keys${query.size ? `?${query}` : ''}`);
    });
  keys
    .command('create')
    .description('create a key (printed once) for a user or an agent identity')
    .requiredOption('--name <name>', 'what the key is for')
    .option('--user <user_uid>')
    .option('--agent <agent_uid>')
    .action((options: { name: string; user?: string; agent?: string }) =>
      callAndPrint('POST', '/admin/api-keys', {
        name: options.name,
        ...(options.user ? { user_uid: options.user } : {}),
        ...(options.agent ? { agent_uid: options.agent } : {}),
      }),
    );
  keys
    .command('revoke')
    .argument('<key_uid>')
    .action((uid: string) => callAndPrint('DELETE', `/admin/api-keys/${segment(uid)}`));

  const agents = program.command('agents').description("the team's agent identities");
  agents
    .command('list')
    .option('--factory <factory_uid>', 'only the agents of this factory (repeatable)', collect, [])
    .action((options: { factory: string[] }) =>
      callAndPrint(
        'GET',
        `/agent/identities${options.factory.length ? `?${options.factory.map((uid) => `factory_uid=${encodeURIComponent(uid)}`).join('&')}` : ''}`,
      ),
    );
  agents
    .command('get')
    .argument('<uid>')
    .action((uid: string) => callAndPrint('GET', `/agent/identities/${segment(uid)}`));
  const agentOptions = (command: Command) =>
    command
      .option('--description <text>')
      .option('--prompt <text>', 'instructions the agent always gets')
      .option('--environment <environment_id>')
      .option('--model <model_id>', 'base model')
      .option('--worker-host <worker_id>', 'self-hosted worker that runs its runs')
      .option(
        '--default-runner <runner_uid>',
        'runner its runs execute with unless a run names one (`hangar runners list`)',
      )
      .option('--skill <skill_spec>', 'skill (repeatable)', collect, [])
      .option('--secret <name>', 'team secret it may use (repeatable)', collect, [])
      .option('--type <agent_type>', 'FOREMAN, TRIAGE, SPEC, IMPLEMENT, REVIEW, VERIFY or CUSTOM')
      .option('--credential-strategy <strategy>', "CREATOR or EXECUTOR: whose GitHub identity its runs' tokens are")
      .option('--claude-auth-secret <name>', 'team secret the claude harness signs in with')
      .option('--codex-auth-secret <name>', 'team secret the codex harness signs in with')
      .option('--on-behalf-of <on|off>', 'whether its API key may create runs on behalf of a member');
  interface AgentOptions {
    name?: string;
    description?: string;
    prompt?: string;
    environment?: string;
    model?: string;
    workerHost?: string;
    defaultRunner?: string;
    skill: string[];
    secret: string[];
    type?: string;
    credentialStrategy?: string;
    claudeAuthSecret?: string;
    codexAuthSecret?: string;
    onBehalfOf?: string;
  }
  const agentBody = (options: AgentOptions) => ({
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.prompt !== undefined ? { prompt: options.prompt } : {}),
    ...(options.environment !== undefined ? { environment_id: options.environment } : {}),
    ...(options.model !== undefined ? { base_model: options.model } : {}),
    ...(options.workerHost !== undefined ? { worker_host: options.workerHost } : {}),
    ...(options.defaultRunner !== undefined ? { default_runner_uid: options.defaultRunner } : {}),
    ...(options.skill.length ? { skills: options.skill } : {}),
    ...(options.secret.length ? { secrets: options.secret.map((name) => ({ name })) } : {}),
    ...(options.type !== undefined ? { agent_type: options.type.toUpperCase() } : {}),
    ...(options.credentialStrategy !== undefined
      ? { credential_strategy: options.credentialStrategy.toUpperCase() }
      : {}),
    ...(options.claudeAuthSecret !== undefined || options.codexAuthSecret !== undefined
      ? {
          harness_auth_secrets: {
            ...(options.claudeAuthSecret !== undefined ? { claude_auth_secret_name: options.claudeAuthSecret } : {}),
            ...(options.codexAuthSecret !== undefined ? { codex_auth_secret_name: options.codexAuthSecret } : {}),
          },
        }
      : {}),
    ...(options.onBehalfOf !== undefined ? { on_behalf_of_enabled: options.onBehalfOf === 'on' } : {}),
  });
  agentOptions(agents.command('create').requiredOption('--name <name>')).action((options: AgentOptions) =>
    callAndPrint('POST', '/agent/identities', agentBody(options)),
  );
  agentOptions(agents.command('update').argument('<uid>').option('--name <name>')).action(
    (uid: string, options: AgentOptions) =>
      callAndPrint('PUT', `/agent/identities/${segment(uid)}`, agentBody(options)),
  );
  agents
    .command('delete')
    .description('delete an agent identity and all of its API keys')
    .argument('<uid>')
    .action((uid: string) => callAndPrint('DELETE', `/agent/identities/${segment(uid)}`));
}
