import fs from 'node:fs';
import type { Command } from 'commander';
import { say, show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { ApiProblem } from '../platform/http/api-fetch.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { SecretGrantItem, SecretItem } from './schemas.js';

const path = (name: string) => `/secrets/${encodeURIComponent(name)}`;

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('reading the secret value from standard input; end it with Ctrl-D\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // `echo "$TOKEN" | hangar secrets set ...` should store the token, not the token and a newline.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** From --value (visible in the process list), --from-file (kept byte for byte) or standard input. */
async function valueFrom(options: { value?: string; fromFile?: string }): Promise<string> {
  if (options.value !== undefined && options.fromFile !== undefined)
    throw new Error('give --value or --from-file, not both');
  const value =
    options.value ?? (options.fromFile !== undefined ? fs.readFileSync(options.fromFile, 'utf8') : await readStdin());
  if (value === '') throw new Error('the secret value is empty');
  return value;
}

/** `hangar secrets ...`: team secrets from the command line (HANGAR_URL, HANGAR_API_KEY). */
export function registerSecretCommands(program: Command): void {
  const secrets = program.command('secrets').description("manage the team's secrets (values are write-only)");
  secrets
    .command('list')
    .description('list secret names (values are never shown)')
    .addHelpText('after', '\nExamples:\n  $ hangar secrets list\n  $ hangar secrets list --json\n')
    .action(async () => {
      const result = await callApi<{ secrets: SecretItem[] }>(clientOptionsFromEnv(), 'GET', '/secrets');
      show(result, ({ secrets }) =>
        table(
          secrets,
          [
            { header: 'NAME', value: (item) => item.name },
            { header: 'CREATED', value: (item) => item.created_at },
            { header: 'UPDATED', value: (item) => item.updated_at },
          ],
          'No secrets. Add one with `hangar secrets set NAME`.',
        ),
      );
    });
  secrets
    .command('set')
    .description(
      'create a secret or replace its value; without --value or --from-file it is read from standard input (one final newline dropped)',
    )
    .argument('<name>', 'secret name: letters, digits, _ . -, starting with a letter or _')
    .option(
      '--value <value>',
      'the value (visible to other users of this machine; prefer --from-file or standard input)',
    )
    .option('--from-file <path>', 'read the value from a file, exactly as it is')
    .addHelpText(
      'after',
      `
Examples:
  $ printf '%s' "$GITHUB_TOKEN" | hangar secrets set GITHUB_TOKEN   # from standard input
  $ hangar secrets set DEPLOY_KEY --from-file ~/.ssh/deploy_key      # byte for byte
`,
    )
    .action(async (name: string, options: { value?: string; fromFile?: string }) => {
      const value = await valueFrom(options);
      const client = clientOptionsFromEnv();
      try {
        show(await callApi(client, 'PUT', path(name), { value }), () => `Replaced the value of secret ${name}.`);
      } catch (error) {
        if (!(error instanceof ApiProblem && error.status === 404)) throw error;
        show(await callApi(client, 'POST', '/secrets', { name, value }), () => `Created secret ${name}.`);
      }
    });
  secrets
    .command('delete')
    .description('delete a secret')
    .argument('<name>')
    .action(async (name: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(name));
      say(`Deleted secret ${name}.`);
    });
  secrets
    .command('grants')
    .description('who besides team admins may use a secret in runs')
    .argument('<name>')
    .action(async (name: string) => {
      const result = await callApi<{ grants: SecretGrantItem[] }>(
        clientOptionsFromEnv(),
        'GET',
        `${path(name)}/grants`,
      );
      show(result, ({ grants }) =>
        table(
          grants,
          [
            { header: 'GRANTEE', value: (grant) => grant.grantee_type },
            { header: 'UID', value: (grant) => grant.grantee_uid },
            { header: 'SINCE', value: (grant) => grant.created_at },
          ],
          `Secret ${name} has no grants: only team admins use it.`,
        ),
      );
    });
  secrets
    .command('grant')
    .description('let a member, an agent identity or an environment use a secret in runs (team admins)')
    .argument('<name>')
    .option('--member <uid>', 'a user of the team')
    .option('--agent <uid>', 'runs this agent identity executes')
    .option('--environment <id>', 'runs in this environment')
    .action(async (name: string, options: GranteeOptions) => {
      const given = grantee(options);
      show(
        await callApi(clientOptionsFromEnv(), 'POST', `${path(name)}/grants`, given),
        () => `Granted ${name} to ${given.grantee_type} ${given.grantee_uid}.`,
      );
    });
  secrets
    .command('revoke')
    .description('withdraw a grant (team admins)')
    .argument('<name>')
    .option('--member <uid>', 'a user of the team')
    .option('--agent <uid>', 'an agent identity')
    .option('--environment <id>', 'an environment')
    .action(async (name: string, options: GranteeOptions) => {
      const { grantee_type, grantee_uid } = grantee(options);
      await callApi(
        clientOptionsFromEnv(),
        'DELETE',
        `${path(name)}/grants/${grantee_type}/${encodeURIComponent(grantee_uid)}`,
      );
      say(`Revoked ${name} from ${grantee_type} ${grantee_uid}.`);
    });
}

interface GranteeOptions {
  member?: string;
  agent?: string;
  environment?: string;
}

/** Exactly one of --member, --agent, --environment. */
function grantee(options: GranteeOptions): { grantee_type: 'member' | 'agent' | 'environment'; grantee_uid: string } {
  const given = (['member', 'agent', 'environment'] as const).filter((type) => options[type] !== undefined);
  if (given.length !== 1) throw new Error('give exactly one of --member, --agent, --environment');
  return { grantee_type: given[0]!, grantee_uid: options[given[0]!]! };
}
