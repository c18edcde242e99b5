// The API's names in people's words: run sources, timeline events, durations. The API name stays available
// (as a tooltip) wherever a label replaces it. The timeline events' words are the CLI's too (src/runs/event-words.ts).
import { eventLabel, sentenceCase } from '../../src/runs/event-words';

export { eventLabel };

const SOURCE_LABELS: Record<string, string> = {
  API: 'API',
  CLI: 'Command line',
  WEB_APP: 'Dashboard',
  SCHEDULED_AGENT: 'Schedule',
  WEBHOOK: 'Webhook',
  RUN_SCORER: 'Scorer',
  LINEAR: 'Linear',
  SLACK: 'Slack',
  LOCAL: 'Local',
  GITHUB_ACTION: 'GitHub Action',
  CLOUD_MODE: 'Cloud mode',
  JIRA: 'Jira',
  SELF_IMPROVEMENT: 'Self-improvement',
  GITHUB_WEBHOOK: 'GitHub webhook',
  GITLAB_WEBHOOK: 'GitLab webhook',
  AUTOFIX: 'Autofix',
  ORCHESTRATION: 'Orchestration',
};

/** "Schedule" for SCHEDULED_AGENT; an unknown source is shown as the API names it, in sentence case. */
export function sourceLabel(source: string): string {
  return SOURCE_LABELS[source] ?? sentenceCase(source);
}

const END_EVENTS = ['oz_run_done', 'oz_run_failed', 'oz_run_errored', 'oz_run_blocked', 'oz_run_cancelled'];

/** The steps a run goes through: the event that ends one, the events that may have started it, and its words. */
const STEPS: Record<string, { from: string[]; words: string }> = {
  oz_run_claimed: { from: ['oz_run_created', 'run_continued', 'followup_received'], words: 'Waited in the queue' },
  worker_container_ready: { from: ['oz_run_claimed'], words: 'Preparing the environment took' },
  agent_started: { from: ['worker_container_ready', 'oz_run_claimed'], words: 'Setup took' },
  ...Object.fromEntries(END_EVENTS.map((type) => [type, { from: ['agent_started'], words: 'The agent worked' }])),
  vm_shutdown: { from: END_EVENTS, words: 'Shutting down took' },
};

/**
 * Each event's duration in words: for the end of a step, how long the step took ("Setup took 42 s", from its
 * own start); otherwise the time since the event before ("5 s later"). Empty for the first event.
 */
export function stepDurations(events: { event_type: string; occurred_at: string }[]): string[] {
  const lastSeen = new Map<string, number>();
  let previous: number | undefined;
  return events.map((event) => {
    const at = new Date(event.occurred_at).getTime();
    const step = STEPS[event.event_type];
    // The latest of the step's possible starts: a follow-up's execution goes through the steps again.
    const starts = step?.from.map((type) => lastSeen.get(type)).filter((time) => time !== undefined) ?? [];
    const since = starts.length > 0 ? Math.max(...starts) : undefined;
    const words =
      step && since !== undefined
        ? `${step.words} ${secondsInWords((at - since) / 1000)}`
        : previous === undefined
          ? ''
          : `${secondsInWords((at - previous) / 1000)} later`;
    lastSeen.set(event.event_type, at);
    previous = at;
    return words;
  });
}

/** Seconds in words: "42 s", "3 min 5 s", "2 h 10 min", "3 days 4 h". */
export function secondsInWords(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  if (seconds < 1) return seconds <= 0 ? '0 s' : `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    const rest = Math.round(seconds - minutes * 60);
    return rest ? `${minutes} min ${rest} s` : `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    const rest = minutes - hours * 60;
    return rest ? `${hours} h ${rest} min` : `${hours} h`;
  }
  const days = Math.floor(hours / 24);
  const rest = hours - days * 24;
  return `${days} ${days === 1 ? 'day' : 'days'}${rest ? ` ${rest} h` : ''}`;
}

/** USD with cents, or more digits below a cent so small amounts do not show as $0.00. */
export function usd(amount: number): string {
  const digits = amount !== 0 && Math.abs(amount) < 0.01 ? 4 : 2;
  return new Intl.NumberFormat(undefined, {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(amount);
}
