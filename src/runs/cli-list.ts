// `hangar runs list` and `hangar runs watch`: every filter of GET /agent/runs as an option.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { collect, examples, oneOf, pairs, someOf } from '../platform/cli/options.js';
import { outputFormat, show } from '../platform/cli/output.js';
import { type ClientOptions, callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import { ARTIFACT_TYPES } from './artifact-types.js';
import { type RunsPage, runsTable } from './cli-views.js';
import { END_STATES, RUN_STATES } from './lifecycle/states.js';
import { EXECUTION_LOCATIONS, RUN_SOURCES } from './run-fields.js';

interface ListOptions {
  state: string[];
  limit: string;
  cursor?: string;
  query?: string;
  sort?: string;
  order?: string;
  name?: string;
  model?: string;
  creator?: string;
  executor?: string;
  source?: string;
  location?: string;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  environment?: string;
  skill?: string;
  skillSpec?: string;
  schedule?: string;
  ancestor?: string;
  artifactType?: string;
  meta: string[];
  automation: string[];
  factory: string[];
}

const UNITS: Record<string, number> = { m: 60, h: 3600, d: 86_400, w: 604_800 };

/** A moment: a date-time as the API takes it, a date (midnight UTC), or a span back from now such as 30m, 2h, 7d. */
function moment(option: string): (value: string) => string {
  return (value) => {
    const span = /^(\d+)([mhdw])$/.exec(value.trim());
    if (span) return new Date(Date.now() - Number(span[1]) * UNITS[span[2]!]! * 1000).toISOString();
    const date = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
    if (Number.isNaN(date.getTime()))
      throw new InvalidArgumentError(
        `${option} takes a date (2026-01-31), a date and time (2026-01-31T09:00:00Z) or a span back from now (30m, 2h, 7d); got "${value}"`,
      );
    return date.toISOString();
  };
}

function withFilters(command: Command): Command {
  return command
    .option(
      '--state <state>',
      `only runs in this state (repeatable; any case): ${RUN_STATES.join(', ')}`,
      someOf('--state', RUN_STATES),
      [],
    )
    .option('-q, --query <words>', 'runs whose title, prompt or skill has every word (a typo in a word is forgiven)')
    .option('--name <config_name>', "runs whose config name (the run's config.name) is exactly this")
    .option('--model <model_id>', 'runs on this model')
    .option('--creator <uid>', 'runs this user or agent created')
    .option('--executor <uid>', 'runs this agent identity executed')
    .addOption(
      new Option('--source <source>', `where runs came from: ${RUN_SOURCES.join(', ')}`).argParser(
        oneOf('--source', RUN_SOURCES),
      ),
    )
    .addOption(new Option('--location <where>', 'LOCAL or REMOTE').argParser(oneOf('--location', EXECUTION_LOCATIONS)))
    .option('--environment <id>', 'runs in this environment (empty-environment: runs without one)')
    .option('--schedule <id>', 'runs this scheduled agent started')
    .option('--skill <name>', 'runs with this skill')
    .option('--skill-spec <spec>', 'runs with this skill spec, e.g. owner/repo:path/SKILL.md')
    .option('--ancestor <run_id>', 'runs descending from this run (its follow-ups and their children)')
    .addOption(
      new Option(
        '--artifact-type <type>',
        `runs that made an artifact of this type: ${ARTIFACT_TYPES.join(', ')}`,
      ).argParser(oneOf('--artifact-type', ARTIFACT_TYPES)),
    )
    .option(
      '--created-after <when>',
      'created after this: 2026-01-31, a date-time, or 30m / 2h / 7d ago',
      moment('--created-after'),
    )
    .option('--created-before <when>', 'created before this (same forms)', moment('--created-before'))
    .option('--updated-after <when>', 'updated after this (same forms)', moment('--updated-after'))
    .option('--meta <key=value>', 'runs whose metadata has this pair (repeatable, at most 5)', collect, [])
    .option('--automation <id>', 'runs this automation fired (repeatable: any of them)', collect, [])
    .option('--factory <uid>', "runs of this factory's automations or agents (repeatable: any of them)", collect, [])
    .addOption(
      new Option('--sort <field>', 'updated_at (default), created_at, title or agent').argParser(
        oneOf('--sort', ['updated_at', 'created_at', 'title', 'agent']),
      ),
    )
    .addOption(new Option('--order <order>', 'desc (default) or asc').argParser(oneOf('--order', ['asc', 'desc'])))
    .option('--limit <n>', 'how many runs (1-500)', '20');
}

/** The options as GET /agent/runs's query string. */
export function listQuery(options: ListOptions): URLSearchParams {
  const params = new URLSearchParams({ limit: options.limit });
  for (const state of options.state) params.append('state', state);
  const single: Array<[string, string | undefined]> = [
    ['cursor', options.cursor],
    ['q', options.query],
    ['sort_by', options.sort],
    ['sort_order', options.order],
    ['name', options.name],
    ['model_id', options.model],
    ['creator', options.creator],
    ['executor', options.executor],
    ['source', options.source],
    ['execution_location', options.location],
    ['created_after', options.createdAfter],
    ['created_before', options.createdBefore],
    ['updated_after', options.updatedAfter],
    ['environment_id', options.environment],
    ['skill', options.skill],
    ['skill_spec', options.skillSpec],
    ['schedule_id', options.schedule],
    ['ancestor_run_id', options.ancestor],
    ['artifact_type', options.artifactType],
  ];
  for (const [name, value] of single) if (value !== undefined) params.set(name, value);
  for (const [key, value] of Object.entries(pairs('--meta', options.meta))) params.set(`metadata[${key}]`, value);
  for (const id of options.automation ?? []) params.append('automation_id', id);
  for (const uid of options.factory ?? []) params.append('factory_uid', uid);
  return params;
}

const fetchPage = (client: ClientOptions, options: ListOptions) =>
  callApi<RunsPage>(client, 'GET', `/agent/runs?${listQuery(options)}`);

const ENDED = new Set<string>([...END_STATES, 'CANCELLED']);

/**
 * Redraws the runs table every `interval` seconds: in place on a terminal; elsewhere (a pipe, a log) the table is
 * printed again only when it changed. With `untilEnded`, stops once every run shown has ended.
 */
async function watch(options: ListOptions & { interval: string; untilEnded?: boolean }): Promise<void> {
  const seconds = Number(options.interval);
  if (!Number.isFinite(seconds) || seconds < 0.5)
    throw new InvalidArgumentError('--interval takes seconds, at least 0.5');
  const client = clientOptionsFromEnv();
  const terminal = process.stdout.isTTY && outputFormat() === 'table';
  let shown = '';
  let stop = false;
  process.once('SIGINT', () => {
    stop = true;
  });
  while (!stop) {
    const page = await fetchPage(client, options);
    // Rows are compared without the relative times, which change every refresh.
    const key = JSON.stringify(page.runs.map((run) => [run.run_id, run.state, run.run_time, run.title]));
    if (terminal) {
      process.stdout.write(
        `\x1b[H\x1b[2J${runsTable(page)}\nRefreshed ${new Date().toISOString().slice(11, 19)} UTC; Ctrl-C stops.\n`,
      );
    } else if (key !== shown) {
      show(page, runsTable);
    }
    shown = key;
    if (options.untilEnded && page.runs.every((run) => ENDED.has(run.state))) return;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
}

export function registerRunListCommands(runs: Command): void {
  examples(
    withFilters(runs.command('list').description('list runs, newest update first')).option(
      '--cursor <cursor>',
      'cursor from a previous page',
    ),
    [
      ['hangar runs list --state failed --created-after 1d', "yesterday's and today's failed runs"],
      ['hangar runs list -q "refactr biling"', 'every word in the title, prompt or skill, misspelled or not'],
      ['hangar runs list --source scheduled_agent --schedule <id>', 'runs one scheduled agent started'],
      ['hangar runs list --meta ticket=ENG-42 --json', 'runs of a ticket, as JSON'],
    ],
  ).action(async (options: ListOptions) => show(await fetchPage(clientOptionsFromEnv(), options), runsTable));

  examples(
    withFilters(runs.command('watch').description('a live table of runs, refreshed until Ctrl-C'))
      .option('--interval <seconds>', 'seconds between refreshes', '2')
      .option('--until-ended', 'stop once every run shown has ended'),
    [
      ['hangar runs watch', 'the 20 most recently updated runs, live'],
      ['hangar runs watch --state queued --state inprogress', 'what is waiting and what is running'],
      ['hangar runs watch --meta batch=42 --until-ended', 'wait for a batch of runs to end'],
    ],
  ).action(watch);
}
