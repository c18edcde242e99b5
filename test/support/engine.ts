import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { type RunSignal, runSignals } from '../../src/runs/lifecycle/signals.js';
import type { TestServer } from './server.js';
import { serverProcessesRunning } from './server-processes.js';

/** The harness the tests script through their prompts (see script()). */
export const SCRIPT_HARNESS = fileURLToPath(new URL('./script-harness.mjs', import.meta.url));

/**
 * An operator config file with the test harnesses: `script` (follows the JSON script in the prompt), `listener`
 * (the same, taking follow-ups on stdin while it runs) and `text` (plain-text output). Returns the env to start
 * a server with.
 */
export function harnessEnv(
  extra: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Record<string, string> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-config-'));
  const file = path.join(directory, 'hangar.yaml');
  const command = [process.execPath, SCRIPT_HARNESS];
  fs.writeFileSync(
    file,
    YAML.stringify({
      default_harness: 'script',
      harnesses: {
        script: { command, timeout_minutes: 5 },
        listener: { command, accepts_input: true },
        text: { command, output: 'text' },
        ...extra,
      },
    }),
  );
  return { HANGAR_CONFIG: file, HANGAR_RUN_LEASE_SECONDS: '6', ...env };
}

/** The prompt that makes the script harness do `steps`. */
export function script(...steps: Array<Record<string, unknown>>): string {
  return JSON.stringify(steps);
}

export async function getRun(hangar: TestServer, runId: string, apiKey?: string): Promise<any> {
  const response = await hangar.request('GET', `/agent/runs/${runId}`, apiKey ? { apiKey } : {});
  if (response.status !== 200) throw new Error(`GET run ${runId}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/**
 * Polls the run until `done(run)` holds; fails with the last state seen after `timeoutMs`. For a `done` that reads
 * more than the state (is_sandbox_running, the transcript), which no lifecycle signal tells of; on the state alone,
 * waitForState and waitForSignalledRun wait on the signals.
 */
export async function waitForRun(
  hangar: TestServer,
  runId: string,
  done: (run: any) => boolean,
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let run: any;
  while (Date.now() < deadline) {
    run = await getRun(hangar, runId);
    if (done(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not get there in ${timeoutMs} ms; last seen: ${JSON.stringify(run)}`);
}

/**
 * Polls `check` until it holds; fails with `what` after `timeoutMs`. For what no event of this process tells of
 * (processes, files, another process's database writes, containers); eventuallySignalled for runs' moves.
 */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/**
 * A test server in this process sends its moves' signals here, and the run is read again at each one; without one
 * it is read again after this long, a backstop. While a server this process spawned runs (server-processes.ts), it
 * may move the runs of a database a test server shares, which no signal here tells of: the run is read as often as
 * the polling waits read it.
 */
const UNSIGNALLED_REREAD_MS = 1_000;
const POLL_MS = 50;

/**
 * Waits until the run is in one of `states`, read through the API: again at each lifecycle signal of the run
 * (src/runs/lifecycle/signals.ts, sent after each committed move of a server in this process) rather than by
 * polling; fails with the last state seen after `timeoutMs`.
 */
export async function waitForState(hangar: TestServer, runId: string, ...states: string[]): Promise<any> {
  return waitForSignalledRun(hangar, runId, (run) => states.includes(run.state));
}

/**
 * waitForRun for a `done` that depends on the run's state alone: read again at each of the run's signals. With
 * `apiKey`, read with that key (another team's run).
 */
export async function waitForSignalledRun(
  hangar: TestServer,
  runId: string,
  done: (run: any) => boolean,
  timeoutMs = 30_000,
  apiKey?: string,
): Promise<any> {
  let run: any;
  const found = await untilSignalled(
    async () => {
      run = await getRun(hangar, runId, apiKey);
      return done(run) ? run : undefined;
    },
    { concerns: (signal) => signal.runId === runId, timeoutMs },
  );
  if (found !== undefined) return found;
  throw new Error(`run ${runId} did not get there in ${timeoutMs} ms; last seen: ${JSON.stringify(run)}`);
}

/**
 * waitForState for a run read with `apiKey` (another team's), with no time limit of its own: the test's timeout
 * bounds it, as it did the loops this replaced.
 */
export function waitForStateAs(hangar: TestServer, apiKey: string, runId: string, ...states: string[]): Promise<any> {
  return waitForSignalledRun(hangar, runId, (run) => states.includes(run.state), Number.POSITIVE_INFINITY, apiKey);
}

/**
 * eventually() for a `check` that can change only when a run is created or moved (a schedule's runs, a run's
 * state read some other way): looked at again at each lifecycle signal of any run rather than every 50 ms.
 */
export async function eventuallySignalled(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const held = await untilSignalled(async () => ((await check()) ? true : undefined), { timeoutMs });
  if (!held) throw new Error(`timed out waiting for: ${what}`);
}

/**
 * Gives `look`'s first value (undefined: not yet), looked at again at each lifecycle signal `concerns` accepts
 * (every signal by default), and after UNSIGNALLED_REREAD_MS without one; undefined after `timeoutMs`.
 */
async function untilSignalled<T>(
  look: () => Promise<T | undefined>,
  options: { concerns?: (signal: RunSignal) => boolean; timeoutMs: number },
): Promise<T | undefined> {
  let signalled = false;
  let wake: (() => void) | undefined;
  const stop = runSignals.on((signal) => {
    if (options.concerns && !options.concerns(signal)) return;
    signalled = true;
    wake?.();
  });
  const deadline = Date.now() + options.timeoutMs;
  try {
    while (Date.now() < deadline) {
      signalled = false;
      const value = await look();
      if (value !== undefined) return value;
      // A signal during the look is not missed: it looks again at once.
      if (signalled) continue;
      await new Promise<void>((resolve) => {
        const wait = serverProcessesRunning() ? POLL_MS : UNSIGNALLED_REREAD_MS;
        const timer = setTimeout(resolve, Math.min(wait, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    stop();
  }
  return undefined;
}

export async function timelineTypes(hangar: TestServer, runId: string): Promise<string[]> {
  const response = await hangar.request('GET', `/agent/runs/${runId}/timeline`);
  return response.body.events.map((event: { event_type: string }) => event.event_type);
}

/** Whether any process's command line contains `marker` (processes in a sandbox's PID namespace included). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Each process as `pid (state, parent ppid): command line`, for a failure message about processes that stayed. */
export function describeProcesses(pids: number[]): string {
  return pids
    .map((pid) => {
      try {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '?';
        const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
        return `${pid} (${field('State')}, parent ${field('PPid')}): ${command}`;
      } catch {
        return `${pid} (gone)`;
      }
    })
    .join('\n');
}

/** The text events a run's harness wrote, one per event, read from the raw transcript download. */
export async function outputTexts(hangar: TestServer, runId: string, apiKey = hangar.apiKey): Promise<string[]> {
  const link = await fetch(`${hangar.apiUrl}/agent/runs/${runId}/transcript`, {
    headers: { authorization: `Bearer ${apiKey}` },
    redirect: 'manual',
  });
  if (link.status !== 302) throw new Error(`transcript of ${runId}: ${link.status} ${await link.text()}`);
  return textEvents(await (await fetch(link.headers.get('location')!)).text());
}

/** The text events of a raw transcript (JSON Lines), in order. */
export function textEvents(rawTranscript: string): string[] {
  return rawTranscript
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .filter((event) => event.type === 'text')
    .map((event) => event.text as string);
}

/**
 * Every block of a run's normalized conversation, in order (child steps included), each with its message's role:
 * what tests look through for the user's messages, the agent's text and its tool calls.
 */
export async function conversationBlocks(hangar: TestServer, runId: string): Promise<any[]> {
  const response = await hangar.request('GET', `/agent/runs/${runId}/conversation`);
  if (response.status !== 200)
    throw new Error(`GET conversation of ${runId}: ${response.status} ${JSON.stringify(response.body)}`);
  const all: any[] = [];
  const visit = (step: any) => {
    for (const message of step.messages)
      for (const block of message.content) all.push({ role: message.role, ...block });
    for (const child of step.steps) visit(child);
  };
  for (const step of response.body.steps) visit(step);
  return all;
}
