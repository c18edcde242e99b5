import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { show } from '../platform/cli/output.js';
import { withProgress } from '../platform/cli/progress.js';
import { table } from '../platform/cli/table.js';
import { ApiProblem } from '../platform/http/api-fetch.js';
import { callAndPrint, callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { ApplyResult } from './apply.js';

/** Directories a definition never lives in. */
const SKIPPED = new Set(['.git', 'node_modules']);
/** The server refuses larger files; skipping them here names them. */
const MAX_FILE_BYTES = 256 * 1024;

/** Every file under `root` by its relative path with `/`; binary and oversized files are skipped with a note. */
export function readDefinitionDirectory(root: string): Record<string, string> {
  if (!fs.existsSync(path.join(root, 'factory.yaml')))
    throw new Error(`${root} has no factory.yaml: is it a factory definition directory?`);
  const files: Record<string, string> = {};
  const walk = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) walk(full);
        continue;
      }
      if (!entry.isFile()) continue;
      const relative = path.relative(root, full).split(path.sep).join('/');
      const bytes = fs.readFileSync(full);
      if (bytes.length > MAX_FILE_BYTES || bytes.includes(0)) {
        process.stderr.write(`skipping ${relative}: not a text file of at most ${MAX_FILE_BYTES} bytes\n`);
        continue;
      }
      files[relative] = bytes.toString('utf8');
    }
  };
  walk(root);
  return files;
}

function describeResult(result: ApplyResult): string {
  const verb = { create: '+', update: '~', delete: '-', unchanged: ' ' } as const;
  const lines = [
    `${result.applied ? 'Applied' : 'Plan for'} factory ${result.factory.name}${result.factory.uid ? ` (${result.factory.uid})` : ''}`,
  ];
  for (const item of result.changes) {
    const fields = item.fields?.length ? ` (${item.fields.join(', ')})` : '';
    const uid = item.uid ? `  ${item.uid}` : '';
    lines.push(`${verb[item.action as keyof typeof verb] ?? '?'} ${item.kind.padEnd(10)} ${item.name}${fields}${uid}`);
  }
  const pending = result.changes.filter((item) => item.action !== 'unchanged').length;
  if (!result.applied)
    lines.push(pending === 0 ? 'Nothing to change.' : `${pending} change(s); run "hangar factory apply" to make them.`);
  return `${lines.join('\n')}\n`;
}

async function send(action: 'plan' | 'apply', directory: string): Promise<void> {
  const files = readDefinitionDirectory(directory);
  const count = Object.keys(files).length;
  try {
    const result = await withProgress(
      `${action === 'plan' ? 'Planning' : 'Applying'} ${directory} (${count} file${count === 1 ? '' : 's'})`,
      callApi<ApplyResult>(clientOptionsFromEnv(), 'POST', `/factory/definitions/${action}`, { files }),
    );
    show(result, describeResult);
  } catch (error) {
    const problems = error instanceof ApiProblem ? error.problem.errors : undefined;
    if (!problems) throw error;
    for (const problem of problems)
      process.stderr.write(`${problem.file}${problem.line ? `:${problem.line}` : ''}: ${problem.message}\n`);
    process.stderr.write(`${problems.length} problem(s); nothing was changed.\n`);
    process.exitCode = 1;
  }
}

interface FactoryView {
  uid: string;
  name: string;
  description: string | null;
  foreman_agent: string | null;
}

/** `hangar factory ...`: factories and their definition directories (HANGAR_URL, HANGAR_API_KEY). */
export function registerFactoryCommands(program: Command): void {
  const factory = program
    .command('factory')
    .description('factories: webhooks, automations, agents and skills defined as files');
  factory
    .command('list')
    .description("list the team's factories")
    .option('--search <text>', 'only factories whose name contains this (any case)')
    .action((options: { search?: string }) =>
      callAndPrint<{ factories: FactoryView[] }>(
        'GET',
        `/factory${options.search ? `?search=${encodeURIComponent(options.search)}` : ''}`,
        undefined,
        ({ factories }) =>
          table(
            factories,
            [
              { header: 'UID', value: (item) => item.uid },
              { header: 'NAME', value: (item) => item.name },
              { header: 'FOREMAN', value: (item) => item.foreman_agent },
              { header: 'DESCRIPTION', value: (item) => item.description },
            ],
            'No factories. `hangar factory apply <dir>` makes one from a definition directory.',
          ),
      ),
    );
  factory
    .command('show')
    .description('show a factory')
    .argument('<uid>', 'the factory UID (22 letters and digits)')
    .action((uid: string) => callAndPrint<FactoryView>('GET', `/factory/${encodeURIComponent(uid)}`));
  factory
    .command('run')
    .description('send work to a factory: a run for its foreman agent (agents/foreman/agent.md)')
    .argument('<uid>', 'the factory UID')
    .argument('<prompt>', 'what to do, sent to the foreman as it is')
    .option('--title <title>', "the run's title (default: made from the prompt)")
    .option('--ticket-ref <ref>', 'the ticket it is for, as <source>:<id> (default: a new adhoc: reference)')
    .option('--ticket-url <url>', "the ticket's URL")
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar factory run 2b8XkQw0aZ3cVf9LmN4pRt "Fix ENG-12" --ticket-ref linear:ENG-12\n',
    )
    .action((uid: string, prompt: string, options: { title?: string; ticketRef?: string; ticketUrl?: string }) =>
      callAndPrint<{ run_id: string; state: string; run_url: string; foreman_agent: string }>(
        'POST',
        `/factory/${encodeURIComponent(uid)}/runs`,
        {
          prompt,
          ...(options.title ? { title: options.title } : {}),
          ...(options.ticketRef ? { ticket_ref: options.ticketRef } : {}),
          ...(options.ticketUrl ? { ticket_url: options.ticketUrl } : {}),
        },
        (run) =>
          `${run.run_id} ${run.state}${run.foreman_agent ? ` (foreman ${run.foreman_agent})` : ''}\n${run.run_url}\n`,
      ),
    );
  factory
    .command('plan')
    .description('show what applying a definition directory would change (changes nothing)')
    .argument('<dir>', 'directory with factory.yaml, webhooks/, automations/, agents/, skills/')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar factory plan ./factory   # every problem at once, or what would change\n',
    )
    .action((directory: string) => send('plan', directory));
  factory
    .command('apply')
    .description('make the factory match a definition directory: all of it or nothing')
    .argument('<dir>', 'directory with factory.yaml, webhooks/, automations/, agents/, skills/')
    .addHelpText('after', '\nExamples:\n  $ hangar factory apply ./factory --json\n')
    .action((directory: string) => send('apply', directory));
}
