import type { Command } from 'commander';
import { callApi, clientOptionsFromEnv, printJson as print } from '../platform/http/client.js';
import type { RunItem } from './schemas.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `hangar run` and `hangar runs ...`: the runs API from the command line (HANGAR_URL, HANGAR_API_KEY). */
export function registerRunCommands(program: Command): void {
  program
    .command('run')
    .description('create a run from a prompt')
    .argument('<prompt>', 'what the agent should do')
    .option('--title <title>', 'title of the run')
    .option('--model <model_id>', 'model to use')
    .option('--environment <environment_id>', 'environment to run in')
    .option('--skill <skill_spec>', 'skill spec, e.g. owner/repo:path/to/SKILL.md')
    .option('--meta <key=value>', 'metadata pair (repeatable)', collect, [])
    .action(async (prompt: string, options: { title?: string; model?: string; environment?: string; skill?: string; meta: string[] }) => {
      const metadata = Object.fromEntries(
        options.meta.map((pair) => {
          const at = pair.indexOf('=');
          if (at < 1) throw new Error(`--meta takes key=value, got "${pair}"`);
          return [pair.slice(0, at), pair.slice(at + 1)];
        }),
      );
      const config = {
        ...(options.model ? { model_id: options.model } : {}),
        ...(options.environment ? { environment_id: options.environment } : {}),
      };
      print(
        await callApi(clientOptionsFromEnv(), 'POST', '/agent/runs', {
          prompt,
          ...(options.title ? { title: options.title } : {}),
          ...(options.skill ? { skill: options.skill } : {}),
          ...(Object.keys(config).length ? { config } : {}),
          ...(options.meta.length ? { metadata } : {}),
        }),
      );
    });

  const runs = program.command('runs').description('list, inspect and cancel runs');
  runs
    .command('list')
    .description('list runs, newest update first')
    .option('--state <state>', 'only runs in this state (repeatable)', collect, [])
    .option('--limit <n>', 'page size (1-500)', '20')
    .option('--cursor <cursor>', 'cursor from a previous page')
    .option('-q, --query <text>', 'fuzzy search over title, prompt and skill')
    .option('--json', 'print the raw response')
    .action(async (options: { state: string[]; limit: string; cursor?: string; query?: string; json?: boolean }) => {
      const params = new URLSearchParams({ limit: options.limit });
      for (const state of options.state) params.append('state', state);
      if (options.cursor) params.set('cursor', options.cursor);
      if (options.query) params.set('q', options.query);
      const page = await callApi<{ runs: RunItem[]; page_info: { next_cursor?: string } }>(
        clientOptionsFromEnv(),
        'GET',
        `/agent/runs?${params}`,
      );
      if (options.json) return print(page);
      for (const run of page.runs) process.stdout.write(`${run.run_id}  ${run.state.padEnd(10)}  ${run.updated_at}  ${run.title}\n`);
      if (page.page_info.next_cursor) process.stdout.write(`next page: --cursor ${page.page_info.next_cursor}\n`);
    });
  runs
    .command('get')
    .description('show one run')
    .argument('<run_id>')
    .action(async (runId: string) => print(await callApi(clientOptionsFromEnv(), 'GET', `/agent/runs/${encodeURIComponent(runId)}`)));
  runs
    .command('cancel')
    .description('cancel a queued or running run')
    .argument('<run_id>')
    .action(async (runId: string) =>
      print(await callApi(clientOptionsFromEnv(), 'POST', `/agent/runs/${encodeURIComponent(runId)}/cancel`)),
    );
  runs
    .command('timeline')
    .description('show the lifecycle events of a run')
    .argument('<run_id>')
    .action(async (runId: string) =>
      print(await callApi(clientOptionsFromEnv(), 'GET', `/agent/runs/${encodeURIComponent(runId)}/timeline`)),
    );
}
