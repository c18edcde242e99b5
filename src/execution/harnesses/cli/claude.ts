import path from 'node:path';
import { z } from 'zod';
import type { HarnessEvent } from '../../../runs/index.js';
import type { AgentCli, CliInvocation, CliInvocationInput } from './agent-cli.js';
import { filesMatching } from './session.js';
import { parseLine, usageEvent } from './stream-line.js';

/** Claude Code's tools whose category is plain from the name; the rest are left to `categoryOf`. */
const CATEGORIES: Record<string, string> = {
  Bash: 'command',
  BashOutput: 'command',
  KillShell: 'command',
  Read: 'files',
  Write: 'files',
  Edit: 'files',
  MultiEdit: 'files',
  NotebookEdit: 'files',
  Grep: 'search',
  Glob: 'search',
  WebSearch: 'search',
};

const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
const ToolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
const ToolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.unknown())]).optional(),
  is_error: z.boolean().optional(),
});
const Block = z.discriminatedUnion('type', [TextBlock, ToolUseBlock, ToolResultBlock]);

const Count = z.number().nonnegative().optional();
// Lines of a subagent (the Task tool) carry the ID of the call that started it: its answer comes back as that call's
// result, so its own steps are left out rather than shown as the main agent's.
const Message = {
  message: z.object({ content: z.union([z.string(), z.array(z.unknown())]) }),
  parent_tool_use_id: z.string().nullish(),
};
const Line = z.discriminatedUnion('type', [
  // `error` marks a message Claude Code made up to report a failed API call; the result line reports it too.
  z.object({ type: z.literal('assistant'), ...Message, error: z.unknown().optional() }),
  z.object({ type: z.literal('user'), ...Message }),
  z.object({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean().optional(),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    total_cost_usd: Count,
    usage: z
      .object({
        input_tokens: Count,
        output_tokens: Count,
        cache_creation_input_tokens: Count,
        cache_read_input_tokens: Count,
      })
      .optional(),
  }),
]);
type Line = z.infer<typeof Line>;

/**
 * Claude Code (`claude -p`, stream-json). The prompt comes on stdin; permissions are bypassed because Hangar's
 * sandbox is the boundary (IS_SANDBOX lets it do so as root, which it refuses otherwise).
 */
export const claude: AgentCli = {
  name: 'claude',
  binary: 'claude',
  npmPackage: '@anthropic-ai/claude-code',

  async invocation({
    prompt,
    model,
    resume,
    home,
    writeHomeFile,
    mcpServers,
  }: CliInvocationInput): Promise<CliInvocation> {
    const env: Record<string, string> = {
      IS_SANDBOX: '1',
      // Telemetry, error reporting, the auto-updater and the other calls besides the model's.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    if (model.apiKey) env.ANTHROPIC_API_KEY = model.apiKey;
    if (model.baseUrl) {
      // Hangar's base URLs include the API version, as the AI SDK takes them; Claude Code adds /v1 itself.
      env.ANTHROPIC_BASE_URL = model.baseUrl.replace(/\/v1$/, '');
      // An operator's endpoint may serve only this model: side tasks and subagents use it too, not a Haiku model.
      env.ANTHROPIC_DEFAULT_HAIKU_MODEL = model.providerModel;
      env.CLAUDE_CODE_SUBAGENT_MODEL = model.providerModel;
    }
    const args = [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      model.providerModel,
      '--permission-mode',
      'bypassPermissions',
    ];
    if (resume) args.push('--resume', resume.id);
    if (Object.keys(mcpServers).length > 0) {
      // In a file, not an argument: headers and env may hold secrets, and arguments show in `ps`.
      const name = '.hangar-mcp.json';
      const servers = Object.fromEntries(
        Object.entries(mcpServers).map(([name, server]) => [
          name,
          'command' in server ? server : { type: 'http', url: server.url, headers: server.headers },
        ]),
      );
      await writeHomeFile(name, JSON.stringify({ mcpServers: servers }));
      args.push('--mcp-config', path.join(home, name), '--strict-mcp-config');
    }
    return { args, env, stdin: prompt };
  },

  translate(line: string): HarnessEvent[] {
    const parsed = parseLine(Line, line);
    return parsed ? events(parsed) : [];
  },

  // Claude Code files a session as projects/<working directory, every other character a dash>/<id>.jsonl.
  sessions: {
    async find(workspace) {
      const [file] = await filesMatching(workspace, '.claude/projects', SESSION_FILE);
      return file
        ? { id: path.basename(file, '.jsonl'), file: path.posix.join('.claude', 'projects', file) }
        : undefined;
    },
    placeFor(session, workspace) {
      return path.join('.claude', 'projects', workspace.replace(/[^A-Za-z0-9]/g, '-'), `${session.id}.jsonl`);
    },
  },
};

const SESSION_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/;

function events(line: Line): HarnessEvent[] {
  if (line.type === 'result') return resultEvents(line);
  if (line.parent_tool_use_id || (line.type === 'assistant' && line.error !== undefined)) return [];
  const content = line.message.content;
  if (typeof content === 'string') return [];
  return content.flatMap((value): HarnessEvent[] => {
    const block = Block.safeParse(value);
    if (!block.success) return [];
    const data = block.data;
    if (data.type === 'text') return line.type === 'assistant' ? [{ type: 'text', text: data.text }] : [];
    if (data.type === 'tool_use') {
      const category = CATEGORIES[data.name];
      return [
        { type: 'tool_call', id: data.id, name: data.name, ...(category ? { category } : {}), input: data.input },
      ];
    }
    return [
      {
        type: 'tool_result',
        id: data.tool_use_id,
        status: data.is_error ? 'failed' : 'completed',
        output: resultText(data.content),
      },
    ];
  });
}

/** The final line carries the run's totals (the assistant lines' usage is partial), so usage is reported here only. */
function resultEvents(line: Extract<Line, { type: 'result' }>): HarnessEvent[] {
  const usage = line.usage;
  const out: HarnessEvent[] = [];
  if (usage || line.total_cost_usd !== undefined) {
    out.push(
      usageEvent({
        // Prompt-cache reads and writes are input tokens too; Anthropic counts them apart.
        input:
          usage &&
          (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
        output: usage?.output_tokens,
        cost: line.total_cost_usd,
      }),
    );
  }
  if (line.subtype === 'success' && !line.is_error)
    out.push({ type: 'done', ...(line.result ? { summary: line.result } : {}) });
  else
    out.push({
      type: 'failed',
      message: line.result || line.errors?.join('; ') || `Claude Code stopped: ${line.subtype}`,
    });
  return out;
}

/** A tool result's content: text as it is, blocks as their text (images are left out). */
function resultText(content: string | unknown[] | undefined): string {
  if (content === undefined || typeof content === 'string') return content ?? '';
  return content
    .flatMap((block) => {
      const text = TextBlock.safeParse(block);
      return text.success ? [text.data.text] : [];
    })
    .join('\n');
}
