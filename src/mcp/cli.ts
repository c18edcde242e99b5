import type { Command } from 'commander';
import { say, show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callAndPrint, callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { McpServerItem } from './schemas.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const path = (uid: string, rest = '') => `/mcp-servers/${encodeURIComponent(uid)}${rest}`;

function pairs(option: string, values: string[]): Array<[string, string]> {
  return values.map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`${option} takes KEY=VALUE, got "${pair}"`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  });
}

/** Plain pairs and secret references in one map; undefined when neither was given. */
function values(option: string, plain: string[], secrets: string[]) {
  if (plain.length === 0 && secrets.length === 0) return undefined;
  return Object.fromEntries([
    ...pairs(`--${option}`, plain),
    ...pairs(`--secret-${option}`, secrets).map(([key, secret]) => [key, { secret }] as const),
  ]);
}

interface CreateOptions {
  name: string;
  command?: string;
  arg: string[];
  env: string[];
  secretEnv: string[];
  url?: string;
  header: string[];
  secretHeader: string[];
}

/** The create body: the server checks that it is exactly one of a command or a URL. */
function body(options: CreateOptions) {
  const env = values('env', options.env, options.secretEnv);
  const headers = values('header', options.header, options.secretHeader);
  return {
    name: options.name,
    ...(options.command !== undefined ? { command: options.command } : {}),
    ...(options.arg.length > 0 ? { args: options.arg } : {}),
    ...(env ? { env } : {}),
    ...(options.url !== undefined ? { url: options.url } : {}),
    ...(headers ? { headers } : {}),
  };
}

/** `hangar mcp-servers ...`: shared MCP server definitions from the command line (HANGAR_URL, HANGAR_API_KEY). */
export function registerMcpServerCommands(program: Command): void {
  const servers = program
    .command('mcp-servers')
    .description("manage the team's MCP servers and share them with other teams");
  servers
    .command('list')
    .description("list the team's MCP servers and those shared with it")
    .addHelpText('after', '\nExamples:\n  $ hangar mcp-servers list --json\n')
    .action(async () => {
      const result = await callApi<{ mcp_servers: McpServerItem[] }>(clientOptionsFromEnv(), 'GET', '/mcp-servers');
      show(result, ({ mcp_servers }) =>
        table(
          mcp_servers,
          [
            { header: 'UID', value: (item) => item.uid },
            { header: 'NAME', value: (item) => item.name },
            { header: 'COMMAND OR URL', value: (item) => item.command ?? item.url },
            { header: 'OWNER', value: (item) => (item.shared_with ? 'this team' : `team ${item.owner_team_uid}`) },
          ],
          'No MCP servers. Define one with `hangar mcp-servers create`.',
        ),
      );
    });
  servers
    .command('create')
    .description('define an MCP server: --command for a stdio server, or --url for an HTTP server')
    .requiredOption('--name <name>', 'name, unique in the team')
    .option('--command <program>', 'stdio server: the program to start')
    .option('--arg <arg>', 'stdio server: an argument (repeatable)', collect, [])
    .option('--env <KEY=VALUE>', 'stdio server: an environment variable (repeatable)', collect, [])
    .option(
      '--secret-env <KEY=SECRET>',
      'stdio server: an environment variable set from a team secret (repeatable)',
      collect,
      [],
    )
    .option('--url <url>', 'HTTP server: its URL')
    .option('--header <NAME=VALUE>', 'HTTP server: a request header (repeatable)', collect, [])
    .option(
      '--secret-header <NAME=SECRET>',
      'HTTP server: a request header set from a team secret (repeatable)',
      collect,
      [],
    )
    .addHelpText(
      'after',
      `
Examples:
  $ hangar mcp-servers create --name github --command npx --arg -y --arg @modelcontextprotocol/server-github \\
      --secret-env GITHUB_PERSONAL_ACCESS_TOKEN=GITHUB_TOKEN
  $ hangar mcp-servers create --name docs --url https://mcp.example.com/mcp --secret-header Authorization=DOCS_AUTH
`,
    )
    .action((options: CreateOptions) => callAndPrint('POST', '/mcp-servers', body(options)));
  servers
    .command('get')
    .description('show one MCP server')
    .argument('<uid>')
    .action((uid: string) => callAndPrint('GET', path(uid)));
  servers
    .command('delete')
    .description('delete an MCP server of this team')
    .argument('<uid>')
    .action(async (uid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid));
      say(`Deleted MCP server ${uid}.`);
    });
  servers
    .command('share')
    .description('let another team see and use an MCP server (team admins)')
    .argument('<uid>')
    .argument('<team_uid>')
    .action((uid: string, teamUid: string) => callAndPrint('POST', path(uid, '/shares'), { team_uid: teamUid }));
  servers
    .command('unshare')
    .description('stop sharing an MCP server with a team (team admins)')
    .argument('<uid>')
    .argument('<team_uid>')
    .action(async (uid: string, teamUid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid, `/shares/${encodeURIComponent(teamUid)}`));
      say(`MCP server ${uid} is no longer shared with team ${teamUid}.`);
    });
}
