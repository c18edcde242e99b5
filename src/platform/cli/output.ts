import type { EventEmitter } from 'node:events';
import { type Command, Option } from 'commander';
import { stringify } from 'yaml';
import { cell, isTimestamp, time } from './format.js';
import { oneOf } from './options.js';
import { table } from './table.js';

/**
 * Every `hangar` verb that prints an answer prints it for people by default (tables with headers, times in
 * words) and, with `--json` or `--output json|yaml`, as the API answered it, for scripts. The format is read once
 * per invocation, before the verb's action, so a verb only says how a person sees its answer.
 */
export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: OutputFormat[] = ['table', 'json', 'yaml'];

let chosen: OutputFormat = 'table';

export const outputFormat = (): OutputFormat => chosen;

/** Verbs that print no API answer (they run a server or a worker, or print a script). */
const NO_OUTPUT = new Set(['serve', 'worker', 'completion', 'help']);

function leaves(command: Command): Command[] {
  return command.commands.length === 0 ? [command] : command.commands.flatMap(leaves);
}

/** A verb without examples of its own gets its usage as one: every `--help` ends with a command line to copy. */
function addMissingExample(command: Command): void {
  // addHelpText('after') listens for this event (a Command is an EventEmitter; its types leave that out).
  if ((command as unknown as EventEmitter).listenerCount('afterHelp') > 0) return;
  const path: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) path.unshift(at.name());
  const args = command.registeredArguments.map((argument) =>
    argument.required ? `<${argument.name()}>` : `[${argument.name()}]`,
  );
  const required = command.options
    .filter((option) => option.mandatory)
    .map((option) => `${option.long} ${option.flags.match(/<[^>]+>/)?.[0] ?? ''}`.trim());
  const line = ['hangar', ...path, ...args, ...required].join(' ');
  command.addHelpText('after', `\nExamples:\n  $ ${line}\n  $ ${line} --json   # the API's answer, for scripts\n`);
}

/** Gives every verb `--json` and `-o, --output`, and reads them before the verb runs. */
export function addOutputOptions(program: Command, alsoOn: Command[] = []): void {
  for (const command of [...leaves(program), ...alsoOn]) {
    if (NO_OUTPUT.has(command.name())) continue;
    if (!command.options.some((option) => option.long === '--json'))
      command.option('--json', "print the API's answer as JSON, for scripts (same as --output json)");
    if (!command.options.some((option) => option.long === '--output'))
      command.addOption(
        new Option('-o, --output <format>', 'table (for people; the default), json or yaml').argParser(
          oneOf('--output', OUTPUT_FORMATS),
        ),
      );
  }
  for (const command of leaves(program)) if (!NO_OUTPUT.has(command.name())) addMissingExample(command);
  program.hook('preAction', (_program, action) => {
    // With globals: `workers` answers itself and has subcommands, so its --json also catches `workers keys create --json`.
    const options = action.optsWithGlobals<{ json?: boolean; output?: OutputFormat }>();
    chosen = options.json ? 'json' : (options.output ?? 'table');
  });
}

function write(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * Prints an API answer: as it is for `--json` and `--output yaml`; otherwise as `human` writes it (text), or, without
 * one, as a readable listing of its fields.
 */
export function show<T>(value: T, human?: (value: T) => string): void {
  if (chosen === 'json') return write(JSON.stringify(value ?? null, null, 2));
  if (chosen === 'yaml') return write(stringify(value ?? null));
  write(human ? human(value) : describe(value));
}

/** Prints a line for people only (a confirmation); scripts that asked for JSON get the answer through `show`. */
export function say(text: string): void {
  if (chosen === 'table') write(text);
}

const label = (key: string) => key.replaceAll('_', ' ');

function scalar(value: unknown): string {
  return isTimestamp(value) ? time(value) : cell(value);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Identifiers first, then names and states, times last: the columns a person scans a list by. */
function columnRank(key: string): number {
  if (key === 'uid' || key === 'id' || key.endsWith('_uid') || key.endsWith('_id')) return 0;
  if (/name|title/.test(key)) return 1;
  if (/state|status|enabled|role|type|access/.test(key)) return 2;
  if (key.endsWith('_at')) return 4;
  return 3;
}

/** A list answer ({teams: [...]}, maybe with page_info) as a table of its items' plain fields. */
function listTable(key: string, items: Array<Record<string, unknown>>): string {
  const keys = [...new Set(items.flatMap((item) => Object.keys(item)))].filter((field) =>
    items.every(
      (item) => !isPlainObject(item[field]) && !(Array.isArray(item[field]) && item[field].some(isPlainObject)),
    ),
  );
  const chosen = keys
    .map((field, index) => ({ field, index }))
    .sort((a, b) => columnRank(a.field) - columnRank(b.field) || a.index - b.index)
    .slice(0, 6)
    .map(({ field }) => field);
  return table(
    items,
    chosen.map((field) => ({ header: label(field).toUpperCase(), value: (item) => item[field] })),
    `No ${label(key)}.`,
  );
}

/** Any JSON answer as indented "field: value" lines, times in words; lists of objects as items under a dash. */
export function describe(value: unknown, indent = ''): string {
  if (value === undefined || value === null) return 'Done.';
  if (indent === '' && isPlainObject(value)) {
    const lists = Object.entries(value).filter(([field]) => field !== 'page_info');
    const [only] = lists;
    if (lists.length === 1 && only && Array.isArray(only[1]) && only[1].every(isPlainObject))
      return listTable(only[0], only[1] as Array<Record<string, unknown>>);
  }
  if (!isPlainObject(value))
    return Array.isArray(value) ? value.map((item) => describe(item)).join('\n') : scalar(value);
  const lines: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (isPlainObject(item) && Object.keys(item).length > 0) {
      lines.push(`${indent}${label(key)}:`, describe(item, `${indent}  `));
    } else if (Array.isArray(item) && item.some(isPlainObject)) {
      lines.push(`${indent}${label(key)}:`);
      for (const entry of item) {
        const block = describe(entry, `${indent}    `).split('\n');
        lines.push(`${indent}  - ${block[0]!.trimStart()}`, ...block.slice(1));
      }
    } else {
      lines.push(`${indent}${label(key)}: ${isPlainObject(item) ? '-' : scalar(item)}`);
    }
  }
  return lines.length > 0 ? lines.join('\n') : `${indent}-`;
}
