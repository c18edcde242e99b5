// How the runs verbs show their answers to people: the runs table, one run, its timeline. `--json` and
// `--output yaml` print the API's answers instead (platform/cli/output.ts).
import { type RefusalInWords, refusalLine } from '../network/cli.js';
import { duration, isoDuration, relative, time } from '../platform/cli/format.js';
import { table } from '../platform/cli/table.js';
import { eventLabel } from './event-words.js';
import type { RunItem } from './schemas.js';

export interface RunsPage {
  runs: RunItem[];
  page_info: { has_next_page?: boolean; next_cursor?: string };
}

const statusMessage = (run: Pick<RunItem, 'status_message'>) =>
  (run.status_message as { message?: string } | undefined)?.message;

export function runsTable(page: RunsPage): string {
  const rows = table(
    page.runs,
    [
      { header: 'RUN ID', value: (run) => run.run_id },
      { header: 'STATE', value: (run) => run.state },
      { header: 'UPDATED', value: (run) => relative(run.updated_at) },
      { header: 'RUN TIME', value: (run) => (run.run_time ? isoDuration(run.run_time) : '') },
      { header: 'SOURCE', value: (run) => run.source },
      { header: 'TITLE', value: (run) => run.title },
      { header: 'DASHBOARD', value: (run) => run.session_link },
    ],
    'No runs match.',
  );
  const next = page.page_info.next_cursor ? `More runs: add --cursor ${page.page_info.next_cursor}\n` : '';
  return `${rows}${next}`;
}

/** A queue wait in words: milliseconds under a second (PT0.035S is "35 ms"), else as other durations. */
function waitInWords(iso: string): string {
  const seconds = /^PT(\d+(?:\.\d+)?)S$/.exec(iso)?.[1];
  return seconds !== undefined && Number(seconds) < 1 ? `${Math.round(Number(seconds) * 1000)} ms` : isoDuration(iso);
}

/** The runner the run recorded at creation: its name, UID and shape. */
function runnerInWords(config: RunItem['agent_config']): string | undefined {
  const { runner_id: uid, runner } = (config ?? {}) as {
    runner_id?: string;
    runner?: { name: string; sandbox?: string; limits?: { cpus?: number; memory?: string; pids?: number } };
  };
  if (!uid || !runner) return undefined;
  const { cpus, memory, pids } = runner.limits ?? {};
  const shape = [
    runner.sandbox,
    cpus === undefined ? undefined : `${cpus} CPUs`,
    memory,
    pids === undefined ? undefined : `${pids} processes`,
  ].filter((part) => part !== undefined);
  return `${runner.name} (${uid})${shape.length > 0 ? `: ${shape.join(', ')}` : ''}`;
}

/** One run: what a person asks first (state and why, how long, where to look), then the rest of its fields. */
export function runView(run: RunItem): string {
  const config = run.agent_config as {
    model_id?: string;
    environment_id?: string;
    harness?: { type?: string };
    credential_strategy?: string;
    computer_use_model_id?: string;
  };
  const message = statusMessage(run);
  const usage = run.request_usage;
  const cost = usage?.inference_cost_breakdown_usd;
  const lines: Array<[string, string | undefined]> = [
    ['Run', run.run_id],
    ['Title', run.title],
    ['State', `${run.state}${message ? `: ${message}` : ''}`],
    ['Error', run.error_category ? `${run.status_message?.error_code} (${run.error_category} error)` : undefined],
    [
      'Debug agent',
      run.debug_agent_available
        ? run.status_message?.debug_agent_active
          ? 'working now in the kept workspace'
          : `a follow-up starts one (window open until ${time(String(run.status_message?.session_debug_until))})`
        : undefined,
    ],
    // Why a QUEUED or PENDING run waits, in the server's words (what to set when nothing can run it).
    ['Waiting', run.queue_reason?.message],
    ['Created', time(run.created_at)],
    ['Started', run.started_at ? time(run.started_at) : undefined],
    ['Updated', time(run.updated_at)],
    ['Finished', run.finished_at ? time(run.finished_at) : undefined],
    // One definition each (docs/lifecycle.md): creation to first claim; the agent's time over its executions.
    ['Queue wait', run.queue_wait ? waitInWords(run.queue_wait) : undefined],
    ['Run time', run.run_time ? isoDuration(run.run_time) : undefined],
    ['Source', run.schedule ? `${run.source} (schedule ${run.schedule.schedule_name})` : run.source],
    ['Trigger', run.trigger_url],
    ['Automation', run.automation_id],
    ['Factory', run.factory_uid],
    ['Creator', run.creator.display_name ?? run.creator.uid],
    ['Model', config.model_id],
    ['Harness', config.harness?.type],
    ['Environment', config.environment_id],
    ['Runner', runnerInWords(run.agent_config)],
    // Whose GitHub identity its tokens stand for (recorded at creation: the run's, its agent's, else EXECUTOR).
    ['GitHub as', config.credential_strategy],
    ['Computer use model', config.computer_use_model_id],
    [
      'Shared',
      run.session_sharing
        ? `${run.session_sharing.public_access === 'EDITOR' ? 'editor' : 'viewer'} link since ${time(run.session_sharing.created_at)} (hangar runs unshare ${run.run_id})`
        : undefined,
    ],
    ['Skill', run.agent_skill?.full_path],
    ['Parent run', run.parent_run_id],
    ['Root run', run.root_run_id !== run.run_id ? run.root_run_id : undefined],
    [
      'Usage',
      usage?.total_tokens !== undefined
        ? `${usage.total_tokens} tokens${usage.inference_cost_usd !== undefined ? `, ${usage.inference_cost_usd.toFixed(4)} USD` : ''}${
            cost ? ` (input ${cost.input_cost_usd.toFixed(4)}, output ${cost.output_cost_usd.toFixed(4)})` : ''
          }`
        : undefined,
    ],
    ['Conversation', run.conversation_id],
    [
      'Metadata',
      Object.keys(run.metadata ?? {}).length
        ? Object.entries(run.metadata)
            .map(([key, value]) => `${key}=${value}`)
            .join(', ')
        : undefined,
    ],
    [
      'Artifacts',
      run.artifacts.length ? run.artifacts.map((artifact) => artifact.artifact_type).join(', ') : undefined,
    ],
    ['Dashboard', run.session_link],
  ];
  const width = Math.max(...lines.map(([name]) => name.length));
  const head = lines
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `${`${name}:`.padEnd(width + 1)} ${value}`)
    .join('\n');
  return `${head}\n${refusedHosts(run.network_refusals ?? [])}\nPrompt:\n${run.prompt.replace(/^/gm, '  ')}\n`;
}

/** What the environment's allow lists refused the run, each host with the entry that would allow it. */
function refusedHosts(refusals: RefusalInWords[]): string {
  if (refusals.length === 0) return '';
  return `\nRefused hosts:\n${refusals.map((entry) => `  ${refusalLine(entry)}\n`).join('')}`;
}

/** A `network_refused` event's line (its payload is the refusal's first attempt); undefined for any other event. */
export function refusedEventLine(event: { event_type: string; payload?: unknown }): string | undefined {
  const payload = event.payload as Partial<RefusalInWords> | undefined;
  if (event.event_type !== 'network_refused' || !payload?.host || !payload.phase || !payload.reason) return undefined;
  return refusalLine(payload as RefusalInWords);
}

interface TimelineEvent {
  event_type: string;
  occurred_at: string;
  payload?: Record<string, unknown>;
}

/** Each event with its time and how long after the previous one it came ("setup took 42 s" reads off the gaps). */
export function timelineTable(answer: { events: TimelineEvent[] }): string {
  let previous: number | undefined;
  return table(
    answer.events.map((event) => {
      const at = Date.parse(event.occurred_at);
      const after = previous === undefined ? '' : `+${duration((at - previous) / 1000)}`;
      previous = at;
      return { ...event, after };
    }),
    [
      { header: 'TIME', value: (event) => event.occurred_at },
      { header: 'AFTER', value: (event) => event.after },
      { header: 'EVENT', value: (event) => eventLabel(event.event_type) },
      {
        header: 'DETAIL',
        value: (event) => {
          const refused = refusedEventLine(event);
          if (refused) return refused;
          const payload = event.payload ?? {};
          const said = payload.message ?? payload.error ?? payload.state ?? payload.reason;
          return typeof said === 'string' ? said : Object.keys(payload).length ? payload : '';
        },
      },
    ],
    'No events yet.',
  );
}
