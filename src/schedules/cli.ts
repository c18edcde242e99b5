import fs from 'node:fs';
import type { Command } from 'commander';
import { time } from '../platform/cli/format.js';
import { collect, examples, oneOf, pairs } from '../platform/cli/options.js';
import { show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { ScheduleItem } from './schemas.js';

// The CLI loads no server module (scripts/check-client-imports.mjs): runs/schemas.ts's RUN_MODES, restated.
const RUN_MODES = ['normal', 'plan', 'orchestrate'] as const;

const path = (id: string, action = '') => `/agent/schedules/${encodeURIComponent(id)}${action}`;

interface ScheduleOptions {
  name?: string;
  cron?: string;
  prompt?: string;
  promptFile?: string;
  paused?: boolean;
  enabled?: boolean;
  model?: string;
  agent?: string;
  mode?: 'normal' | 'plan' | 'orchestrate';
  meta: string[];
}

function promptOf(options: ScheduleOptions): string | undefined {
  if (options.prompt !== undefined && options.promptFile !== undefined)
    throw new Error('give --prompt or --prompt-file, not both');
  return options.promptFile !== undefined ? fs.readFileSync(options.promptFile, 'utf8') : options.prompt;
}

function createBody(options: ScheduleOptions) {
  const prompt = promptOf(options);
  if (!prompt) throw new Error('give --prompt or --prompt-file');
  return {
    name: options.name,
    cron_schedule: options.cron,
    prompt,
    enabled: !options.paused,
    ...(options.model ? { agent_config: { model_id: options.model } } : {}),
    ...(options.agent ? { agent_uid: options.agent } : {}),
    ...(options.mode ? { mode: options.mode } : {}),
    ...(options.meta.length ? { metadata: pairs('--meta', options.meta) } : {}),
  };
}

/** The schedule as it is, with only the options given changed: a PUT replaces the whole schedule. */
function mergedBody(current: ScheduleItem, options: ScheduleOptions) {
  if (options.paused && options.enabled) throw new Error('give --paused or --enabled, not both');
  const prompt = promptOf(options);
  const config = { ...(current.agent_config ?? {}), ...(options.model ? { model_id: options.model } : {}) };
  const agentUid = options.agent ?? current.agent_uid;
  const mode = options.mode ?? current.mode;
  return {
    name: options.name ?? current.name,
    cron_schedule: options.cron ?? current.cron_schedule,
    prompt: prompt ?? current.prompt,
    enabled: options.paused ? false : options.enabled ? true : current.enabled,
    // Given pairs replace the metadata; without, it stays (a PUT without metadata would clear it).
    metadata: options.meta.length ? pairs('--meta', options.meta) : current.metadata,
    ...(mode ? { mode } : {}),
    ...(Object.keys(config).length > 0 ? { agent_config: config } : {}),
    ...(agentUid ? { agent_uid: agentUid } : {}),
  };
}

function withScheduleOptions(command: Command, creating: boolean): Command {
  const name = '--name <name>';
  const cron = '--cron <expression>';
  const cronHelp = 'cron expression in UTC, e.g. "0 9 * * 1-5" or @daily';
  return (
    creating
      ? command.requiredOption(name, 'name of the scheduled agent').requiredOption(cron, cronHelp)
      : command.option(name, 'new name').option(cron, cronHelp)
  )
    .option('--prompt <text>', 'what the agent should do on each run')
    .option('--prompt-file <path>', 'read the prompt from a file')
    .option('--model <model_id>', 'model to use (`hangar models` lists them)')
    .option('--agent <agent_uid>', 'agent identity that executes the runs')
    .option('--mode <mode>', 'mode of every run it starts (default normal)', oneOf('--mode', RUN_MODES))
    .option('--meta <key=value>', 'metadata stamped on every run it starts (repeatable; replaces all)', collect, [])
    .option('--paused', creating ? 'save it paused' : 'pause it');
}

function schedulesTable(result: { schedules: ScheduleItem[] }): string {
  return table(
    result.schedules,
    [
      { header: 'ID', value: (item) => item.id },
      { header: 'NAME', value: (item) => item.name },
      { header: 'CRON (UTC)', value: (item) => item.cron_schedule },
      { header: 'NEXT RUN', value: (item) => (item.enabled ? item.history.next_run : 'paused') },
      { header: 'LAST RAN', value: (item) => item.history.last_ran ?? 'never' },
      { header: 'MODE', value: (item) => item.mode ?? 'normal' },
      { header: 'LAST ERROR', value: (item) => item.last_spawn_error },
    ],
    'No scheduled agents. Create one with `hangar schedules create`.',
  );
}

function scheduleView(item: ScheduleItem): string {
  return [
    `Schedule:  ${item.id}`,
    `Name:      ${item.name}`,
    `Cron:      ${item.cron_schedule} (UTC)${item.enabled ? '' : ', paused'}`,
    `Next run:  ${item.enabled ? time(item.history.next_run) : 'paused'}`,
    `Last ran:  ${item.history.last_ran ? time(item.history.last_ran) : 'never'}`,
    ...(item.last_spawn_error ? [`Last error: ${item.last_spawn_error}`] : []),
    ...((item.agent_config as { model_id?: string } | undefined)?.model_id
      ? [`Model:     ${(item.agent_config as { model_id: string }).model_id}`]
      : []),
    ...(item.agent_uid ? [`Agent:     ${item.agent_uid}`] : []),
    ...(item.mode && item.mode !== 'normal' ? [`Mode:      ${item.mode}`] : []),
    ...(item.environment ? [`Environment: ${String((item.environment as { name?: string }).name ?? '')}`] : []),
    ...(Object.keys(item.metadata).length > 0
      ? [
          `Metadata:  ${Object.entries(item.metadata)
            .map(([key, value]) => `${key}=${value}`)
            .join(', ')}`,
        ]
      : []),
    `Created:   ${time(item.created_at)} by ${item.created_by.display_name ?? item.created_by.uid}`,
    `Updated:   ${time(item.updated_at)} by ${item.updated_by.display_name ?? item.updated_by.uid}`,
    '',
    'Prompt:',
    item.prompt.replace(/^/gm, '  '),
  ].join('\n');
}

/** `hangar schedules ...`: scheduled agents from the command line (HANGAR_URL, HANGAR_API_KEY). */
export function registerScheduleCommands(program: Command): void {
  const schedules = program.command('schedules').description('manage scheduled agents');
  examples(schedules.command('list').description('list scheduled agents with their next run'), [
    ['hangar schedules list', 'a table with each next run'],
    ['hangar schedules list --output yaml', 'every field, as YAML'],
  ]).action(async () =>
    show(
      await callApi<{ schedules: ScheduleItem[] }>(clientOptionsFromEnv(), 'GET', '/agent/schedules'),
      schedulesTable,
    ),
  );
  examples(withScheduleOptions(schedules.command('create').description('create a scheduled agent'), true), [
    [
      'hangar schedules create --name "Nightly triage" --cron "0 3 * * *" --prompt "Triage new issues"',
      'every night at 03:00 UTC',
    ],
    ['hangar schedules create --name Weekly --cron @weekly --prompt-file weekly.md --paused', 'saved paused'],
  ]).action(async (options: ScheduleOptions) =>
    show(
      await callApi<ScheduleItem>(clientOptionsFromEnv(), 'POST', '/agent/schedules', createBody(options)),
      scheduleView,
    ),
  );
  examples(
    withScheduleOptions(
      schedules
        .command('update')
        .description('change a scheduled agent: only the options given change')
        .argument('<id>'),
      false,
    ).option('--enabled', 'resume it'),
    [
      ['hangar schedules update <id> --cron "0 6 * * 1-5"', 'only the time changes'],
      ['hangar schedules update <id> --prompt-file triage.md --model claude-sonnet-4', 'a new prompt and model'],
    ],
  ).action(async (id: string, options: ScheduleOptions) => {
    const client = clientOptionsFromEnv();
    const current = await callApi<ScheduleItem>(client, 'GET', path(id));
    show(await callApi<ScheduleItem>(client, 'PUT', path(id), mergedBody(current, options)), scheduleView);
  });
  for (const [verb, description, method, action] of [
    ['get', 'show one scheduled agent', 'GET', ''],
    ['pause', 'stop starting runs until resumed', 'POST', '/pause'],
    ['resume', 'start runs again from the next tick', 'POST', '/resume'],
  ] as const) {
    examples(schedules.command(verb).description(description).argument('<id>'), [
      [`hangar schedules ${verb} <id>`, description],
    ]).action(async (id: string) =>
      show(await callApi<ScheduleItem>(clientOptionsFromEnv(), method, path(id, action)), scheduleView),
    );
  }
  examples(schedules.command('delete').description('delete a scheduled agent (its past runs stay)').argument('<id>'), [
    ['hangar schedules delete <id>', 'its past runs stay'],
  ]).action(async (id: string) =>
    show(await callApi(clientOptionsFromEnv(), 'DELETE', path(id)), () => `Deleted scheduled agent ${id}.`),
  );
}
