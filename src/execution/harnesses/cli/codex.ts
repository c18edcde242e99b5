import path from 'node:path';
import { z } from 'zod';
import type { ResolvedDefinition } from '../../../mcp/index.js';
import type { HarnessEvent } from '../../../runs/index.js';
import type { AgentCli, CliInvocation, CliInvocationInput } from './agent-cli.js';
import { filesMatching } from './session.js';
import { notice, parseLine, providerMessage, usageEvent } from './stream-line.js';

const OPENAI_API = 'https://api.openai.com/v1';

const Id = z.string().min(1);
const Status = z.string().optional();
// The items of `codex exec --json` that are tool activity, and what they become.
const ToolItem = z.discriminatedUnion('type', [
  z.object({
    id: Id,
    type: z.literal('command_execution'),
    command: z.string(),
    aggregated_output: z.string().optional(),
    status: Status,
  }),
  z.object({ id: Id, type: z.literal('file_change'), changes: z.array(z.unknown()), status: Status }),
  z.object({
    id: Id,
    type: z.literal('mcp_tool_call'),
    server: z.string(),
    tool: z.string(),
    arguments: z.unknown(),
    result: z.unknown(),
    error: z.unknown(),
    status: Status,
  }),
  z.object({ id: Id, type: z.literal('web_search'), query: z.string().optional() }),
]);
type ToolItem = z.infer<typeof ToolItem>;
const Item = z.union([
  ToolItem,
  z.object({ type: z.literal('agent_message'), text: z.string() }),
  // Non-fatal: a setting it ignored, model metadata it lacks.
  z.object({ type: z.literal('error'), message: z.string() }),
]);

const Line = z.discriminatedUnion('type', [
  z.object({ type: z.literal('item.started'), item: z.unknown() }),
  z.object({ type: z.literal('item.completed'), item: z.unknown() }),
  z.object({
    type: z.literal('turn.completed'),
    usage: z
      .object({ input_tokens: z.number().nonnegative(), output_tokens: z.number().nonnegative() })
      .partial()
      .optional(),
  }),
  z.object({ type: z.literal('turn.failed'), error: z.object({ message: z.string() }) }),
  // Reported before `turn.failed`, which is the one that ends the run.
  z.object({ type: z.literal('error'), message: z.string() }),
]);
type Line = z.infer<typeof Line>;

/**
 * Codex (`codex exec --json`). It ignores OPENAI_BASE_URL, so the endpoint is a model provider of its own defined
 * with -c (the Responses API, over HTTP: the websocket transport is for OpenAI's own servers). Approvals and its
 * own sandbox are off: nobody is there to approve, and Hangar's sandbox is the boundary.
 */
export const codex: AgentCli = {
  name: 'codex',
  binary: 'codex',
  npmPackage: '@openai/codex',

  async invocation({ prompt, model, resume, writeHomeFile, mcpServers }: CliInvocationInput): Promise<CliInvocation> {
    // MCP servers go in the fresh HOME's config.toml, not in -c arguments: headers and env may hold secrets.
    if (Object.keys(mcpServers).length > 0) await writeHomeFile('.codex/config.toml', mcpToml(mcpServers));
    const provider = {
      name: '"Hangar"',
      // JSON strings are valid TOML basic strings.
      base_url: JSON.stringify(model.baseUrl ?? OPENAI_API),
      ...(model.apiKey ? { env_key: '"OPENAI_API_KEY"' } : {}),
      wire_api: '"responses"',
      supports_websockets: 'false',
    };
    const table = `{${Object.entries(provider)
      .map(([key, value]) => `${key}=${value}`)
      .join(',')}}`;
    const settings = [
      'model_provider="hangar"',
      `model_providers.hangar=${table}`,
      'analytics.enabled=false',
      'feedback.enabled=false',
      'check_for_update_on_startup=false',
      'history.persistence="none"',
    ];
    const args = [
      'exec',
      // `exec resume <id>` takes the same options, then the session to go on with.
      ...(resume ? ['resume'] : []),
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--model',
      model.providerModel,
      ...settings.flatMap((setting) => ['-c', setting]),
      ...(resume ? [resume.id] : []),
      // The prompt from stdin.
      '-',
    ];
    return { args, env: model.apiKey ? { OPENAI_API_KEY: model.apiKey } : {}, stdin: prompt };
  },

  translate(line: string): HarnessEvent[] {
    const parsed = parseLine(Line, line);
    return parsed ? events(parsed) : [];
  },

  // Codex files a session as sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl and finds it by ID wherever it runs.
  sessions: {
    async find(workspace) {
      const [file] = await filesMatching(workspace, '.codex/sessions', ROLLOUT_FILE);
      return file
        ? { id: ROLLOUT_FILE.exec(path.basename(file))![1]!, file: path.posix.join('.codex', 'sessions', file) }
        : undefined;
    },
    placeFor: (session) => session.file,
  },
};

/** A TOML string or inline table of strings (JSON strings are valid TOML basic strings). */
const tomlString = (value: string) => JSON.stringify(value);
const tomlTable = (values: Record<string, string>) =>
  `{ ${Object.entries(values)
    .map(([key, value]) => `${tomlString(key)} = ${tomlString(value)}`)
    .join(', ')} }`;

/** The `[mcp_servers.<name>]` tables of Codex's config.toml: a stdio command, or a streamable HTTP url with headers. */
function mcpToml(servers: Record<string, ResolvedDefinition>): string {
  return Object.entries(servers)
    .map(([name, server]) => {
      const lines =
        'command' in server
          ? [
              `command = ${tomlString(server.command)}`,
              `args = [${server.args.map(tomlString).join(', ')}]`,
              `env = ${tomlTable(server.env)}`,
            ]
          : [`url = ${tomlString(server.url)}`, `http_headers = ${tomlTable(server.headers)}`];
      return [`[mcp_servers.${tomlString(name)}]`, ...lines, ''].join('\n');
    })
    .join('\n');
}

const ROLLOUT_FILE = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

function events(line: Line): HarnessEvent[] {
  switch (line.type) {
    case 'item.started': {
      const item = ToolItem.safeParse(line.item);
      return item.success ? [toolCall(item.data)] : [];
    }
    case 'item.completed': {
      const item = Item.safeParse(line.item);
      if (!item.success) return [];
      if (item.data.type === 'agent_message') return [{ type: 'text', text: item.data.text }];
      if (item.data.type === 'error') return [notice(item.data.message)];
      return [toolResult(item.data)];
    }
    case 'turn.completed': {
      // One `codex exec` is one turn, and its usage counts every model request of it (cached input included).
      const usage = line.usage;
      return [
        ...(usage ? [usageEvent({ input: usage.input_tokens, output: usage.output_tokens })] : []),
        { type: 'done' },
      ];
    }
    case 'turn.failed':
      return [{ type: 'failed', message: providerMessage(line.error.message) }];
    case 'error':
      return [notice(providerMessage(line.message))];
  }
}

function toolCall(item: ToolItem): HarnessEvent {
  switch (item.type) {
    case 'command_execution':
      return { type: 'tool_call', id: item.id, name: 'shell', category: 'command', input: { command: item.command } };
    case 'file_change':
      return {
        type: 'tool_call',
        id: item.id,
        name: 'apply_patch',
        category: 'files',
        input: { changes: item.changes },
      };
    case 'mcp_tool_call':
      return {
        type: 'tool_call',
        id: item.id,
        name: `${item.server}.${item.tool}`,
        category: 'integration',
        input: item.arguments,
      };
    case 'web_search':
      return { type: 'tool_call', id: item.id, name: 'web_search', category: 'search', input: { query: item.query } };
  }
}

function toolResult(item: ToolItem): HarnessEvent {
  const status = item.type === 'web_search' ? 'completed' : statusOf(item.status);
  const output =
    item.type === 'command_execution'
      ? (item.aggregated_output ?? '')
      : item.type === 'file_change'
        ? item.changes
        : item.type === 'mcp_tool_call'
          ? (item.error ?? item.result)
          : null;
  return { type: 'tool_result', id: item.id, status, output };
}

/** Codex's item statuses: `completed`, `failed` (a command's non-zero exit too), `declined`. */
function statusOf(status: string | undefined): 'completed' | 'failed' | 'denied' {
  if (status === 'declined') return 'denied';
  return status === 'failed' ? 'failed' : 'completed';
}
