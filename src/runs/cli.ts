import type { Command } from 'commander';
import { createParser } from 'eventsource-parser';
import { duration } from '../platform/cli/format.js';
import { collect, examples, oneOf } from '../platform/cli/options.js';
import { show } from '../platform/cli/output.js';
import { ApiProblem, problemOf } from '../platform/http/api-fetch.js';
import { type ClientOptions, callApi, clientOptionsFromEnv, sendApiAnswer } from '../platform/http/client.js';
import { createRunOnce } from './cli-create.js';
import { failureBlock, waitingLine } from './cli-explain.js';
import { registerRunListCommands } from './cli-list.js';
import { registerRunLookupCommands } from './cli-lookups.js';
import { registerRunShareCommands, SHARE_LEVELS, shareLinkLine } from './cli-share.js';
import { refusedEventLine, runView, timelineTable } from './cli-views.js';
import { parseTimeout, WaitNotice } from './cli-waiting.js';
import { eventLabel } from './event-words.js';
import type { HarnessEvent } from './harness-protocol.js';
import type { RunItem } from './schemas.js';

const runPath = (runId: string, action = '') => `/agent/runs/${encodeURIComponent(runId)}${action}`;

/** One line per timeline entry (in the dashboard's words) and per text or tool event; other protocol events show in the timeline. */
// biome-ignore lint/suspicious/noExplicitAny: the events' parsed JSON, each kind read field by field
function printer(waiting: WaitNotice): (kind: string | undefined, data: any) => void {
  const toolNames = new Map<string, string>();
  const line = (text: string) => {
    waiting.clear();
    process.stdout.write(`${text}\n`);
  };
  return (kind, data) => {
    if (kind === 'timeline') {
      // Picked up: the wait is over, whatever the live line said.
      if (data.event_type === 'oz_run_claimed' || data.event_type === 'agent_started') waiting.stop();
      const refused = refusedEventLine(data);
      return line(`[${eventLabel(data.event_type)}]${refused ? ` ${refused}` : ''}`);
    }
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

/** `--timeout` passed: the follow stops, the run goes on. */
class FollowTimeout extends Error {
  constructor(readonly seconds: number) {
    super(`followed for ${seconds} s`);
  }
}

/** Consecutive connection attempts that bring no event before giving up. */
const MAX_ATTEMPTS = 10;

/**
 * Prints a run's live events until its `end` event and returns the final state. A dropped connection is
 * resumed with Last-Event-ID, so nothing is printed twice or skipped. Not retried: an error answer (4xx), and a
 * server that could not be reached at all (most likely a wrong HANGAR_URL).
 */
async function followRun(
  client: ClientOptions,
  runId: string,
  print: ReturnType<typeof printer>,
  signal: AbortSignal,
): Promise<string> {
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
        signal,
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
      if (signal.aborted) throw signal.reason;
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
async function followToEnd(client: ClientOptions, runId: string, timeout?: number): Promise<void> {
  const start = await callApi<Pick<RunItem, 'session_link' | 'queue_reason'>>(client, 'GET', runPath(runId));
  process.stdout.write(`${openInDashboard(start)}\n${waitingLine(start) ?? ''}`);
  const waiting = new WaitNotice(client, runId, start.queue_reason?.message);
  const stopFollowing = new AbortController();
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(() => stopFollowing.abort(new FollowTimeout(timeout)), timeout * 1000);
  let state: string;
  waiting.start();
  try {
    state = await followRun(client, runId, printer(waiting), stopFollowing.signal);
  } catch (error) {
    if (!(error instanceof FollowTimeout)) throw error;
    waiting.stop();
    const now = await callApi<Pick<RunItem, 'state' | 'queue_reason'>>(client, 'GET', runPath(runId));
    process.stdout.write(
      `Stopped following after ${duration(timeout!)} (--timeout): the run is ${now.state} and goes on${now.queue_reason ? ` (${now.queue_reason.message})` : ''}. \`hangar runs events ${runId}\` follows it again, \`hangar runs cancel ${runId}\` stops it.\n`,
    );
    process.exitCode = 1;
    return;
  } finally {
    clearTimeout(timer);
    waiting.stop();
  }
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
  const run = program
    .command('run')
    .description('create a run from a prompt')
    .argument('<prompt>', 'what the agent should do')
    .option('--title <title>', 'title of the run')
    .option('--model <model_id>', 'model to use')
    .option('--environment <environment_id>', 'environment to run in')
    .option('--runner <runner_uid>', 'runner to execute with (`hangar runners list`; config.runner_id)')
    .option('--skill <skill_spec>', 'skill spec, e.g. owner/repo:path/to/SKILL.md')
    .option('--meta <key=value>', 'metadata pair (repeatable)', collect, [])
    .option('--harness <name>', 'harness to run the agent with (config.harness.type)')
    .option(
      '--share <level>',
      'a link for people without a key: viewer (read the run) or editor (also follow-ups); shown once',
      oneOf('--share', SHARE_LEVELS),
    )
    .option(
      '--credential-strategy <strategy>',
      "whose GitHub identity the run's tokens stand for: creator or executor (default: the agent's, else executor)",
      oneOf('--credential-strategy', ['CREATOR', 'EXECUTOR']),
    )
    .option('--computer-use-model <model_id>', 'config.computer_use_model_id (recorded; no Hangar harness uses it)')
    .option('--follow', "print the run's events until it ends; exit 1 unless it succeeded")
    .option(
      '--timeout <duration>',
      'with --follow: stop following after this long (45s, 10m, 2h); exit 1, the run goes on',
      parseTimeout,
    );
  examples(run, [
    ['hangar run "Fix the flaky login test" --follow', 'create a run and print its events until it ends'],
    [
      'hangar run "Bump the deps" --model claude-sonnet-4 --meta ticket=ENG-42',
      'pick a model (`hangar models`), tag it',
    ],
    ['hangar run "Triage" --environment <id> --json', 'in an environment; print the answer as JSON'],
  ]).action(
    async (
      prompt: string,
      options: {
        title?: string;
        model?: string;
        environment?: string;
        runner?: string;
        skill?: string;
        meta: string[];
        harness?: string;
        share?: string;
        credentialStrategy?: string;
        computerUseModel?: string;
        follow?: boolean;
        timeout?: number;
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
        ...(options.runner ? { runner_id: options.runner } : {}),
        ...(options.harness ? { harness: { type: options.harness } } : {}),
        ...(options.share ? { session_sharing: { public_access: options.share } } : {}),
        ...(options.credentialStrategy ? { credential_strategy: options.credentialStrategy } : {}),
        ...(options.computerUseModel ? { computer_use_model_id: options.computerUseModel } : {}),
      };
      const client = clientOptionsFromEnv();
      const created = await createRunOnce(client, {
        prompt,
        ...(options.title ? { title: options.title } : {}),
        ...(options.skill ? { skill: options.skill } : {}),
        ...(Object.keys(config).length ? { config } : {}),
        ...(options.meta.length ? { metadata } : {}),
      });
      if (!options.follow)
        return show(
          created,
          (run) =>
            `Created run ${run.run_id} (${run.state}).\n${waitingLine(run) ?? ''}${run.session_sharing ? shareLinkLine(run.session_sharing) : ''}Follow it: hangar runs events ${run.run_id}\n`,
        );
      process.stdout.write(`run ${created.run_id} ${created.state}\n`);
      if (created.session_sharing) process.stdout.write(shareLinkLine(created.session_sharing));
      await followToEnd(client, created.run_id, options.timeout);
    },
  );

  const runs = program.command('runs').description('list, inspect, follow and cancel runs; send follow-ups');
  registerRunListCommands(runs);
  registerRunShareCommands(runs);
  registerRunLookupCommands(runs);
  runs
    .command('get')
    .description('show one run')
    .argument('<run_id>')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs get <run_id>          # state, times, model, prompt\n  $ hangar runs get <run_id> --json   # every field, for scripts\n',
    )
    .action(async (runId: string) =>
      show(await callApi<RunItem>(clientOptionsFromEnv(), 'GET', runPath(runId)), runView),
    );
  runs
    .command('cancel')
    .description('cancel a queued or running run')
    .argument('<run_id>')
    .option('--operator', "as an instance administrator: any team's run, self-hosted ones and runs being prepared too")
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs cancel <run_id>\n  $ hangar runs cancel <run_id> --operator   # an administrator stopping any run\n',
    )
    .action(async (runId: string, options: { operator?: boolean }) =>
      show(
        await callApi<string>(
          clientOptionsFromEnv(),
          'POST',
          `${options.operator ? '/admin' : '/agent'}/runs/${encodeURIComponent(runId)}/cancel`,
        ),
        (id) => `Cancelled run ${id}.`,
      ),
    );
  runs
    .command('timeline')
    .description('show the lifecycle events of a run')
    .argument('<run_id>')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs timeline <run_id>   # each step with its time and how long after the previous one\n',
    )
    .action(async (runId: string) =>
      show(
        await callApi<Parameters<typeof timelineTable>[0]>(clientOptionsFromEnv(), 'GET', runPath(runId, '/timeline')),
        timelineTable,
      ),
    );
  runs
    .command('events')
    .description('print the events of a run as they happen until it ends; exit 1 unless it succeeded')
    .argument('<run_id>')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs events <run_id>   # the live output; exits 1 unless the run succeeds\n',
    )
    .option(
      '--timeout <duration>',
      'stop following after this long (45s, 10m, 2h); exit 1, the run goes on',
      parseTimeout,
    )
    .action(async (runId: string, options: { timeout?: number }) =>
      followToEnd(clientOptionsFromEnv(), runId, options.timeout),
    );
  runs
    .command('followup')
    .description(
      'send a follow-up message (a queued run takes it at start, a running one live, an ended one continues)',
    )
    .argument('<run_id>')
    .argument('<message>')
    .option(
      '--mode <mode>',
      'normal, plan or orchestrate (any case)',
      oneOf('--mode', ['normal', 'plan', 'orchestrate']),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs followup <run_id> "Also update the changelog"\n  $ hangar runs followup <run_id> "Plan the migration first" --mode plan\n',
    )
    .action(async (runId: string, message: string, options: { mode?: string }) =>
      show(
        await callApi(clientOptionsFromEnv(), 'POST', runPath(runId, '/followups'), {
          message,
          ...(options.mode ? { mode: options.mode } : {}),
        }),
        () => `Sent the follow-up to run ${runId}; \`hangar runs get ${runId}\` shows its state.`,
      ),
    );
  runs
    .command('conversation')
    .description('show the normalized conversation of a run')
    .argument('<run_id>')
    .addHelpText('after', '\nExamples:\n  $ hangar runs conversation <run_id> --output yaml\n')
    .action(async (runId: string) =>
      show(await callApi(clientOptionsFromEnv(), 'GET', runPath(runId, '/conversation'))),
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
