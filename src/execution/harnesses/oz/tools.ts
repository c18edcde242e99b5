import path from 'node:path';
import { type ToolSet, tool } from 'ai';
import { z } from 'zod';
import type { HarnessEvent } from '../../../runs/index.js';
import { type FileOwner, WorkspaceFiles } from '../../workspace/files.js';
import { displayPath, resolveInWorkspace } from './paths.js';
import { runShell, type ShellOptions, type ShellResult } from './shell.js';

export interface OzToolLimits {
  /** Shell commands are killed after this long (default 2 minutes). */
  commandTimeoutMs: number;
  /** Bytes of a command's output the model sees (default 64 KiB). */
  commandOutputBytes: number;
  /** Bytes of a file `read_file` returns (default 256 KiB). */
  readBytes: number;
  /** Entries `list_files` returns (default 500). */
  listEntries: number;
  /** Matches `search_files` returns (default 200). */
  searchMatches: number;
}

export const DEFAULT_TOOL_LIMITS: OzToolLimits = {
  commandTimeoutMs: 120_000,
  commandOutputBytes: 64 * 1024,
  readBytes: 256 * 1024,
  listEntries: 500,
  searchMatches: 200,
};

export interface OzToolContext {
  workspace: string;
  /** Who owns the files the tools create (the run's user); unset: the server's own user. */
  workspaceOwner?: FileOwner;
  /** The environment shell commands run with. */
  env: Record<string, string | undefined>;
  limits: OzToolLimits;
  /** Emits protocol events the tools produce themselves (artifacts). */
  emit(event: HarnessEvent): void;
  /** Called by `ask_user`: the loop ends after this step with the question. */
  ask(question: string): void;
  signal: AbortSignal;
  /** Runs `run_command`'s commands: in the run's sandbox when the harness gives one, else a plain process group. */
  shell?: (command: string, options: ShellOptions) => Promise<ShellResult>;
}

/** Directories never listed or searched. */
const SKIPPED = new Set(['.git', 'node_modules']);
/** Files larger than this are not searched. */
const SEARCH_FILE_BYTES = 1024 * 1024;
/** Files larger than this are not edited (the whole file is read, changed and written back). */
const EDIT_FILE_BYTES = 64 * 1024 * 1024;

/** The tool category the conversation normalizer shows, by tool name. */
export const TOOL_CATEGORIES: Record<string, string> = {
  run_command: 'command',
  read_file: 'files',
  write_file: 'files',
  edit_file: 'files',
  list_files: 'files',
  search_files: 'search',
  report_artifact: 'integration',
  ask_user: 'integration',
};

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/**
 * The tools of the built-in agent; every path is resolved inside the workspace. The AI SDK starts the tool calls
 * of one step concurrently; here they run one at a time, in the order the model made them, so two edits of one
 * file cannot race and events come in call order.
 */
export function createOzTools(context: OzToolContext): ToolSet {
  const tools = defineTools(context);
  let queue: Promise<unknown> = Promise.resolve();
  for (const definition of Object.values(tools)) {
    const execute = definition.execute;
    if (!execute) continue;
    definition.execute = (input: unknown, options: Parameters<typeof execute>[1]) => {
      const run = queue.then(() => execute(input, options));
      queue = run.catch(() => undefined);
      return run;
    };
  }
  return tools;
}

function defineTools(context: OzToolContext): ToolSet {
  const { workspace, limits } = context;
  const resolve = (requested: string) => resolveInWorkspace(workspace, requested);
  // The tools run in the server, on a workspace the run's own processes change meanwhile: every file is reached
  // through workspace/files.ts (handle-relative, no link followed out of the workspace, no check-then-reopen).
  const inWorkspace = <T>(use: (files: WorkspaceFiles) => Promise<T>) =>
    WorkspaceFiles.with(workspace, context.workspaceOwner, use);

  return {
    run_command: tool({
      description: `Runs a shell command (/bin/sh -c) in the workspace, or in a directory inside it. Output (stdout and stderr together) is capped at ${limits.commandOutputBytes} bytes; the command is killed after timeout_seconds (default ${Math.round(limits.commandTimeoutMs / 1000)}).`,
      inputSchema: z.object({
        command: z.string().min(1),
        cwd: z.string().optional().describe('Directory relative to the workspace root'),
        timeout_seconds: z.number().int().positive().optional(),
      }),
      execute: async ({ command, cwd, timeout_seconds }) => {
        // The shell resolves it inside the sandbox, where the workspace is all it can write.
        const directory = path.join(workspace, await resolve(cwd ?? '.'));
        const timeoutMs = Math.min(
          timeout_seconds !== undefined ? timeout_seconds * 1000 : limits.commandTimeoutMs,
          limits.commandTimeoutMs * 5,
        );
        const result = await (context.shell ?? runShell)(command, {
          cwd: directory,
          env: context.env,
          timeoutMs,
          maxOutputBytes: limits.commandOutputBytes,
          signal: context.signal,
        });
        return {
          exit_code: result.exitCode,
          ...(result.signal ? { signal: result.signal } : {}),
          ...(result.timedOut ? { timed_out: true, note: `killed after ${Math.round(timeoutMs / 1000)} seconds` } : {}),
          output: result.output,
          ...(result.truncatedBytes > 0
            ? { output_truncated: `output beyond ${limits.commandOutputBytes} bytes was dropped` }
            : {}),
        };
      },
    }),

    read_file: tool({
      description: `Reads a text file in the workspace. At most ${limits.readBytes} bytes are returned; use offset_line and max_lines for parts of large files.`,
      inputSchema: z.object({
        path: z.string().min(1),
        offset_line: z.number().int().min(1).optional().describe('First line to return, from 1'),
        max_lines: z.number().int().positive().optional(),
      }),
      execute: async ({ path: requested, offset_line, max_lines }) => {
        const file = await resolve(requested);
        // One byte more than returned tells whether there was more.
        const buffer = await inWorkspace((files) =>
          files.readFile(file, { follow: true, maxBytes: limits.readBytes + 1, truncate: true }),
        );
        const truncated = buffer.length > limits.readBytes;
        let content = buffer.subarray(0, limits.readBytes).toString('utf8');
        if (offset_line !== undefined || max_lines !== undefined) {
          const lines = content.split('\n');
          const start = (offset_line ?? 1) - 1;
          content = lines.slice(start, max_lines !== undefined ? start + max_lines : undefined).join('\n');
        }
        return { path: requested, content, ...(truncated ? { truncated: true } : {}) };
      },
    }),

    write_file: tool({
      description:
        'Creates or overwrites a file in the workspace with the given content (parent directories are created).',
      inputSchema: z.object({ path: z.string().min(1), content: z.string() }),
      execute: async ({ path: requested, content }) => {
        const file = await resolve(requested);
        await inWorkspace((files) => files.writeFile(file, content, { follow: true }));
        return { path: displayPath(file), bytes: Buffer.byteLength(content) };
      },
    }),

    edit_file: tool({
      description:
        'Replaces old_string with new_string in a file. old_string must match the file exactly (whitespace included) and occur exactly once; include surrounding lines to make it unique.',
      inputSchema: z.object({ path: z.string().min(1), old_string: z.string().min(1), new_string: z.string() }),
      execute: async ({ path: requested, old_string, new_string }) => {
        const file = await resolve(requested);
        await inWorkspace(async (files) => {
          const content = (await files.readFile(file, { follow: true, maxBytes: EDIT_FILE_BYTES })).toString('utf8');
          const count = occurrences(content, old_string);
          if (count === 0) throw new Error(`old_string was not found in ${requested}`);
          if (count > 1)
            throw new Error(
              `old_string occurs ${count} times in ${requested}; include more context so it matches once`,
            );
          const at = content.indexOf(old_string);
          await files.writeFile(file, content.slice(0, at) + new_string + content.slice(at + old_string.length), {
            follow: true,
          });
        });
        return { path: requested, replaced: 1 };
      },
    }),

    list_files: tool({
      description: `Lists files and directories (directories end in /) under a directory of the workspace, recursively; .git and node_modules are skipped. At most ${limits.listEntries} entries.`,
      inputSchema: z.object({
        path: z.string().optional().describe('Directory relative to the workspace root; the root when absent'),
      }),
      execute: async ({ path: requested }) => {
        const directory = await resolve(requested ?? '.');
        const entries: string[] = [];
        let truncated = false;
        await inWorkspace(async (files) => {
          for await (const entry of files.walk(directory, { follow: true, skip: SKIPPED })) {
            if (entries.length >= limits.listEntries) {
              truncated = true;
              break;
            }
            entries.push(entry.path + (entry.directory ? '/' : ''));
          }
        });
        return { entries, ...(truncated ? { truncated: true } : {}) };
      },
    }),

    search_files: tool({
      description: `Searches the text files under a directory of the workspace for a substring (or a JavaScript regular expression with regex: true), line by line. Returns path:line: text, at most ${limits.searchMatches} matches.`,
      inputSchema: z.object({
        pattern: z.string().min(1),
        regex: z.boolean().optional(),
        case_insensitive: z.boolean().optional(),
        path: z.string().optional().describe('Directory relative to the workspace root; the root when absent'),
      }),
      execute: async ({ pattern, regex, case_insensitive, path: requested }) => {
        const directory = await resolve(requested ?? '.');
        let matcher: (line: string) => boolean;
        if (regex) {
          const expression = new RegExp(pattern, case_insensitive ? 'i' : '');
          matcher = (line) => expression.test(line);
        } else if (case_insensitive) {
          const lower = pattern.toLowerCase();
          matcher = (line) => line.toLowerCase().includes(lower);
        } else {
          matcher = (line) => line.includes(pattern);
        }
        const matches: string[] = [];
        let truncated = false;
        await inWorkspace(async (files) => {
          outer: for await (const entry of files.walk(directory, { follow: true, skip: SKIPPED })) {
            if (entry.directory) continue;
            // Larger files are left out, as are unreadable and binary ones.
            const buffer = await entry.read(SEARCH_FILE_BYTES);
            if (!buffer || buffer.subarray(0, 8000).includes(0)) continue;
            const lines = buffer.toString('utf8').split('\n');
            for (let index = 0; index < lines.length; index++) {
              if (!matcher(lines[index]!)) continue;
              if (matches.length >= limits.searchMatches) {
                truncated = true;
                break outer;
              }
              matches.push(`${entry.path}:${index + 1}: ${lines[index]!.slice(0, 500)}`);
            }
          }
        });
        return { matches, ...(truncated ? { truncated: true } : {}) };
      },
    }),

    report_artifact: tool({
      description:
        'Reports something the run produced so people can find it: a pull request you opened, a file in the workspace, a plan, or a link to an external resource.',
      inputSchema: z.discriminatedUnion('artifact_type', [
        z.object({ artifact_type: z.literal('PULL_REQUEST'), url: z.string().url(), branch: z.string().min(1) }),
        z.object({ artifact_type: z.literal('FILE'), path: z.string().min(1), description: z.string().optional() }),
        z.object({ artifact_type: z.literal('PLAN'), title: z.string().min(1), content: z.string().min(1) }),
        z.object({
          artifact_type: z.literal('EXTERNAL_REFERENCE'),
          url: z.string().url(),
          description: z.string().optional(),
        }),
      ]),
      execute: async (input) => {
        const { artifact_type, ...rest } = input;
        const data: Record<string, unknown> = rest;
        if (artifact_type === 'FILE') {
          // Checked here so the model hears about a bad path; the recorder reads the file from the workspace.
          const file = await resolve(input.path);
          const stat = await inWorkspace((files) => files.stat(file, { follow: true })).catch(() => null);
          if (!stat?.isFile()) throw new Error(`${input.path} is not a file in the workspace`);
          data.path = displayPath(file);
        }
        // (The protocol's artifact_type union is built from a list, so TypeScript cannot see its members.)
        context.emit({ type: 'artifact', artifact_type, data } as HarnessEvent);
        return { reported: artifact_type };
      },
    }),

    ask_user: tool({
      description:
        'Asks the user a question and stops working until they answer. Use it only when you cannot go on without their decision or information.',
      inputSchema: z.object({ question: z.string().min(1) }),
      execute: async ({ question }) => {
        context.ask(question);
        return { asked: true, note: 'The run pauses here; the answer arrives as the next user message.' };
      },
    }),
  };
}
