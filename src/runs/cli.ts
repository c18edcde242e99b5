import { createParser } from 'eventsource-parser';
import type { Command } from 'commander';
import type { HarnessEvent } from './harness-protocol.js';
import { ApiProblem, problemOf } from '../platform/http/api-fetch.js';
import {
  callApi,
  clientOptionsFromEnv,
  printJson as print,
  sendApiAnswer,
  type ClientOptions,
} from '../platform/http/client.js';
import { createRunOnce } from './cli-create.js';
import { failureBlock, waitingLine } from './cli-explain.js';
import type { RunItem } from './schemas.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const runPath = (runId: string, action = '') => `/agent/runs/${encodeURIComponent(runId)}${action}`;

/** One line per timeline entry and per text or tool event; other protocol events show in the timeline. */
// biome-ignore lint/suspicious/noExplicitAny: the events' parsed JSON, each kind read field by field
function printer(): (kind: string | undefined, data: any) => void {
  const toolNames = new Map<string, string>();
  const line = (text: string) => process.stdout.write(`${text}\n`);
  return (kind, data) => {
    if (kind === 'timeline') return line(`[${data.event_type}]`);
    if (kind !== 'output') return;
    const event = data.event as HarnessEvent | null;
    // Not a protocol event: a plain-text harness's output or a log line, shown as it is.
    if (!event) return line(data.line);
    if (event.type === 'text') return line(`assistant: ${event.text}`);
    if (event.type === 'tool_call') {
      toolNames.set(event.id, event.name);
      return line(`tool ${event.name}: ${JSON.stringify(event.input ?? {})}`);
    }
    if (event.type === 'tool_result')
      return line(`tool ${event.name ?? toolNames.get(event.id) ?? event.id} ${event.status ?? 'completed'}`);
  };
}

/** Consecutive connection attempts that bring no event before giving up. */
const MAX_ATTEMPTS = 10;

/**
 * Prints a run's live events until its `end` event and returns the final state. A dropped connection is
 * resumed with Last-Event-ID, so nothing is printed twice or skipped. Not retried: an error answer (4xx), and a
 * server that could not be reached at all (most likely a wrong HANGAR_URL).
 */
async function followRun(client: ClientOptions, runId: string): Promise<string> {
  const print = printer();
  let lastEventId: string | undefined;
  let retryMs = 1000;
  let attempts = 0;
  let connected = false;
  for (;;) {
    attempts += 1;
    let end: { state: string } | undefined;
    try {
      const response = await sendApiAnswer(client, runPath(runId, '/events'), {
        headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      });
      if (!response.ok || !response.body) throw await problemOf(response);
      connected = true;
      const parser = createParser({
        onRetry: (ms) => (retryMs = ms),
        onEvent: (message) => {
          attempts = 0;
          if (message.id) lastEventId = message.id;
          if (message.event === 'end') end = JSON.parse(message.data);
          else print(message.event, JSON.parse(message.data));
        },
      });
      for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
        parser.feed(chunk);
        if (end) break;
      }
    } catch (error) {
      if ((error instanceof ApiProblem && error.status < 500) || !connected || attempts >= MAX_ATTEMPTS) throw error;
    }
    if (end) return end.state;
    if (attempts >= MAX_ATTEMPTS)
      throw new Error(`the event stream of run ${runId} keeps closing; try \`hangar runs events ${runId}\``);
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}

/** Where a person continues with a run: its session link, the run's page in the web dashboard. */
const openInDashboard = (run: Pick<RunItem, 'session_link'>) => `open in dashboard: ${run.session_link}`;

/**
 * Follows a run to its end, prints how it ended, and exits 0 only if it succeeded. Its session link comes first,
 * for whoever would rather watch it in the dashboard.
 */
async function followToEnd(client: ClientOptions, runId: string): Promise<void> {
  const start = await callApi<Pick<RunItem, 'session_link' | 'queue_reason'>>(client, 'GET', runPath(runId));
  process.stdout.write(`${openInDashboard(start)}\n${waitingLine(start) ?? ''}`);
  const state = await followRun(client, runId);
  const run = await callApi<Pick<RunItem, 'failure_output'> & { status_message?: { message?: string } }>(
    client,
    'GET',
    runPath(runId),
  );
  const message = run.status_message?.message;
  process.stdout.write(`${state}${message ? `: ${message}` : ''}\n${failureBlock(run) ?? ''}`);
  process.exitCode = state === 'SUCCEEDED' ? 0 : 1;
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
    .option('--harness <name>', 'harness to run the agent with (config.harness.type)')
    .option('--follow', "print the run's events until it ends; exit 1 unless it succeeded")
    .action(
      async (
        prompt: string,
        options: {
          title?: string;
          model?: string;
          environment?: string;
          skill?: string;
          meta: string[];
          harness?: string;
          follow?: boolean;
        },
      ) => {
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
          ...(options.harness ? { harness: { type: options.harness } } : {}),
        };
        const client = clientOptionsFromEnv();
        const created = await createRunOnce(client, {
          prompt,
          ...(options.title ? { title: options.title } : {}),
          ...(options.skill ? { skill: options.skill } : {}),
          ...(Object.keys(config).length ? { config } : {}),
          ...(options.meta.length ? { metadata } : {}),
        });
        if (!options.follow) return print(created);
        process.stdout.write(`run ${created.run_id} ${created.state}\n`);
        await followToEnd(client, created.run_id);
      },
    );

  const runs = program.command('runs').description('list, inspect, follow and cancel runs; send follow-ups');
  runs
    .command('list')
    .description('list runs, newest update first')
    .option('--state <state>', 'only runs in this state (repeatable)', collect, [])
    .option('--limit <n>', 'page size (1-500)', '20')
    .option('--cursor <cursor>', 'cursor from a previous page')
    .option('-q, --query <words>', 'runs whose title, prompt or skill has every word (a typo in a word is forgiven)')
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
      // The link goes on a line of its own: the title before it may hold any text.
      for (const run of page.runs)
        process.stdout.write(
          `${run.run_id}  ${run.state.padEnd(10)}  ${run.updated_at}  ${run.title}\n  ${openInDashboard(run)}\n`,
        );
      if (page.page_info.next_cursor) process.stdout.write(`next page: --cursor ${page.page_info.next_cursor}\n`);
    });
  runs
    .command('get')
    .description('show one run')
    .argument('<run_id>')
    .action(async (runId: string) =>
      print(await callApi(clientOptionsFromEnv(), 'GET', `/agent/runs/${encodeURIComponent(runId)}`)),
    );
  runs
    .command('cancel')
    .description('cancel a queued or running run')
    .argument('<run_id>')
    .option('--operator', "as an instance administrator: any team's run, self-hosted ones and runs being prepared too")
    .action(async (runId: string, options: { operator?: boolean }) =>
      print(
        await callApi(
          clientOptionsFromEnv(),
          'POST',
          `${options.operator ? '/admin' : '/agent'}/runs/${encodeURIComponent(runId)}/cancel`,
        ),
      ),
    );
  runs
    .command('timeline')
    .description('show the lifecycle events of a run')
    .argument('<run_id>')
    .action(async (runId: string) =>
      print(await callApi(clientOptionsFromEnv(), 'GET', `/agent/runs/${encodeURIComponent(runId)}/timeline`)),
    );
  runs
    .command('events')
    .description('print the events of a run as they happen until it ends; exit 1 unless it succeeded')
    .argument('<run_id>')
    .action(async (runId: string) => followToEnd(clientOptionsFromEnv(), runId));
  runs
    .command('followup')
    .description(
      'send a follow-up message (a queued run takes it at start, a running one live, an ended one continues)',
    )
    .argument('<run_id>')
    .argument('<message>')
    .option('--mode <mode>', 'normal, plan or orchestrate')
    .action(async (runId: string, message: string, options: { mode?: string }) =>
      print(
        await callApi(clientOptionsFromEnv(), 'POST', runPath(runId, '/followups'), {
          message,
          ...(options.mode ? { mode: options.mode } : {}),
        }),
      ),
    );
  runs
    .command('conversation')
    .description('show the normalized conversation of a run')
    .argument('<run_id>')
    .action(async (runId: string) =>
      print(await callApi(clientOptionsFromEnv(), 'GET', runPath(runId, '/conversation'))),
    );
  runs
    .command('transcript')
    .description('print the raw harness output of a run, one line each')
    .argument('<run_id>')
    .action(async (runId: string) => {
      const client = clientOptionsFromEnv();
      // The answer is a redirect to a signed link, which needs no API key: it is fetched without one.
      const response = await sendApiAnswer(client, runPath(runId, '/transcript'), { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || !location) throw await problemOf(response);
      const download = await fetch(new URL(location, client.baseUrl));
      if (!download.ok) throw await problemOf(download);
      process.stdout.write(await download.text());
    });
}
