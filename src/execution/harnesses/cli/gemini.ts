import path from 'node:path';
import { z } from 'zod';
import type { HarnessEvent } from '../../../runs/index.js';
import type { AgentCli, CliInvocation, CliInvocationInput } from './agent-cli.js';
import { filesMatching } from './session.js';
import { notice, parseLine, providerMessage, usageEvent } from './stream-line.js';

/** Gemini CLI's tools whose category is plain from the name; the rest are left to `categoryOf`. */
const CATEGORIES: Record<string, string> = {
  run_shell_command: 'command',
  read_file: 'files',
  read_many_files: 'files',
  write_file: 'files',
  replace: 'files',
  list_directory: 'files',
  glob: 'search',
  grep_search: 'search',
  google_web_search: 'search',
};

/**
 * The user settings a run starts with: an API key as the way to sign in (it asks otherwise), and no usage
 * statistics, telemetry or update checks.
 */
const SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
};

const Count = z.number().nonnegative().optional();
const Line = z.discriminatedUnion('type', [
  // The user's prompt comes back as a message too; Hangar keeps what it sent as the transcript's input.
  z.object({ type: z.literal('message'), role: z.string(), content: z.string() }),
  z.object({
    type: z.literal('tool_use'),
    tool_id: z.string().min(1),
    tool_name: z.string().min(1),
    parameters: z.unknown(),
  }),
  z.object({
    type: z.literal('tool_result'),
    tool_id: z.string().min(1),
    status: z.string(),
    output: z.string().optional(),
    error: z.object({ message: z.string() }).optional(),
  }),
  // Non-fatal (a warning, a retried call); a fatal error ends in the result line.
  z.object({ type: z.literal('error'), message: z.string() }),
  z.object({
    type: z.literal('result'),
    status: z.string(),
    error: z.object({ message: z.string() }).optional(),
    stats: z.object({ input_tokens: Count, output_tokens: Count }).optional(),
  }),
]);
type Line = z.infer<typeof Line>;

/**
 * Gemini CLI (`gemini -o stream-json`), prompt on stdin. Without an explicit model it first asks a routing model
 * which one to use, a call a custom endpoint does not answer. YOLO approves every tool call: Hangar's sandbox is
 * the boundary.
 */
export const gemini: AgentCli = {
  name: 'gemini',
  binary: 'gemini',
  npmPackage: '@google/gemini-cli',

  async invocation({
    prompt,
    model,
    home,
    writeHomeFile,
    resume,
    mcpServers,
  }: CliInvocationInput): Promise<CliInvocation> {
    const servers = Object.fromEntries(
      Object.entries(mcpServers).map(([name, server]) => [
        name,
        'command' in server ? server : { httpUrl: server.url, headers: server.headers },
      ]),
    );
    await writeHomeFile('.gemini/settings.json', `${JSON.stringify({ ...SETTINGS, mcpServers: servers }, null, 2)}\n`);
    const env: Record<string, string> = {};
    if (model.apiKey) env.GEMINI_API_KEY = model.apiKey;
    // Hangar's base URLs include the API version, as the AI SDK takes them; the Gemini SDK adds it itself.
    if (model.baseUrl) env.GOOGLE_GEMINI_BASE_URL = model.baseUrl.replace(/\/v1(beta)?$/, '');
    // --skip-trust: headless, it refuses to run in a folder nobody trusted (and YOLO would fall back to asking).
    const args = [
      '--output-format',
      'stream-json',
      '--model',
      model.providerModel,
      '--approval-mode',
      'yolo',
      '--skip-trust',
    ];
    if (resume) args.push('--session-file', path.join(home, resume.file));
    return { args, env, stdin: prompt };
  },

  translate(line: string): HarnessEvent[] {
    const parsed = parseLine(Line, line);
    return parsed ? events(parsed) : [];
  },

  // Gemini CLI files a session as tmp/<project>/chats/session-<time>-<id>.jsonl; --session-file takes it from anywhere.
  sessions: {
    async find(workspace) {
      const [file] = await filesMatching(workspace, '.gemini/tmp', /^session-.*\.jsonl$/);
      return file ? { id: path.basename(file, '.jsonl'), file: path.posix.join('.gemini', 'tmp', file) } : undefined;
    },
    placeFor: (session) => session.file,
  },
};

function events(line: Line): HarnessEvent[] {
  switch (line.type) {
    case 'message':
      // Assistant text comes in deltas: each joins the text before it in one block.
      return line.role === 'assistant' ? [{ type: 'text', text: line.content, delta: true }] : [];
    case 'tool_use': {
      const category = CATEGORIES[line.tool_name];
      return [
        {
          type: 'tool_call',
          id: line.tool_id,
          name: line.tool_name,
          ...(category ? { category } : {}),
          input: line.parameters,
        },
      ];
    }
    case 'tool_result':
      return [
        {
          type: 'tool_result',
          id: line.tool_id,
          status: line.status === 'success' ? 'completed' : 'failed',
          output: line.output ?? line.error?.message ?? '',
        },
      ];
    case 'error':
      return [notice(line.message)];
    case 'result': {
      // The run's totals; no line before it reports usage.
      const usage = line.stats
        ? [usageEvent({ input: line.stats.input_tokens, output: line.stats.output_tokens })]
        : [];
      if (line.status === 'success') return [...usage, { type: 'done' }];
      return [
        ...usage,
        {
          type: 'failed',
          message: line.error ? providerMessage(line.error.message) : `Gemini CLI stopped: ${line.status}`,
        },
      ];
    }
  }
}
