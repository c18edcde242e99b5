import fs from 'node:fs';
import { currentSpawner } from '../../platform/spawn/index.js';
import { forEachProcess, parseStat, processIds, readStat } from './proc.js';

/** The variable that marks every process of one process-mode sandbox, wherever in the process tree it ended up. */
export const SANDBOX_MARK = 'HANGAR_SANDBOX_ID';
/** Its values in a NUL-separated environ; a process may carry the variable twice. */
const MARK_IN_ENVIRON = new RegExp(`(?:^|\\0)${SANDBOX_MARK}=([^\\0]*)`, 'g');
/**
 * Scans start at most this often. A scan costs tens of ms of CPU (every process's stat, read asynchronously); under
 * a stream of exits, scanning back to back would take as much CPU as it gets, while spacing the scans lets each one
 * serve more exits. A caller waits up to this much longer, and only while scans follow each other.
 */
const MIN_SCAN_INTERVAL_MS = 100;

interface Request {
  /** The sandbox leader's start time: its processes, all started by the leader or its descendants, are no older. */
  since: number;
  callers: Array<(pids: number[]) => void>;
}

/** The marks asked for since the last scan started, with who asked. */
let queued = new Map<string, Request>();
let scanning = false;
let lastScanStart = -Infinity;

/**
 * The start time to hand `markedProcesses` for a sandbox whose leader was just spawned; 0 (no cut-off) when it
 * cannot be told. Read at once, synchronously, when the pid is known. Its parent must be us or our spawner
 * (src/platform/spawn), or the entry is not our leader's (a /proc of another PID namespace, or a leader that already
 * ended, was reaped by the spawner, and whose pid went to another process).
 */
export function leaderStartTime(leader: number): number {
  try {
    const stat = parseStat(leader, fs.readFileSync(`/proc/${leader}/stat`, 'latin1'));
    const parent = stat.ppid === process.pid || stat.ppid === currentSpawner()?.pid;
    return parent && Number.isFinite(stat.startTime) ? stat.startTime : 0;
  } catch {
    return 0;
  }
}

/**
 * The running processes whose environment carries `mark`: without bwrap, a process that started a session of its
 * own (setsid, as Gemini CLI does for its commands) or was orphaned is out of the group and off the tree, but it
 * inherited the sandbox's environment. Processes of other users cannot be read and are not ours anyway. `since` is
 * the sandbox's `leaderStartTime`.
 *
 * That takes reading the environment of every process on the machine, so callers asking at about the same time
 * share one scan, off the event loop: each caller waits for the next scan to start (one under way may already have
 * passed a process started since), which reads every process once and matches it against all the marks asked for.
 */
export function markedProcesses(mark: string, since: number): Promise<number[]> {
  return new Promise((resolve) => {
    const request = queued.get(mark) ?? queued.set(mark, { since, callers: [] }).get(mark)!;
    request.since = Math.min(request.since, since);
    request.callers.push(resolve);
    if (scanning) return;
    scanning = true;
    // After the current phase of the loop, so that every exit and kill it is handling now joins this scan.
    setImmediate(() => void scanWhileAsked());
  });
}

async function scanWhileAsked(): Promise<void> {
  while (queued.size > 0) {
    const wait = lastScanStart + MIN_SCAN_INTERVAL_MS - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    lastScanStart = performance.now();
    const requests = queued;
    queued = new Map();
    // scan does not throw; were it to, the callers go on rather than wait forever.
    const found = await scan(requests).catch(() => new Map<string, Set<number>>());
    for (const [mark, request] of requests) {
      for (const resolve of request.callers) resolve([...(found.get(mark) ?? [])]);
    }
  }
  scanning = false;
}

async function scan(requests: Map<string, Request>): Promise<Map<string, Set<number>>> {
  const found = new Map<string, Set<number>>();
  const since = Math.min(...[...requests.values()].map((request) => request.since));
  await forEachProcess((await processIds()) ?? [], async (pid) => {
    if (pid === process.pid) return;
    const stat = await readStat(pid);
    // Gone, a zombie, or older than every sandbox asked about (most of the machine): its environ is not read.
    if (!stat?.running || stat.startTime < since) return;
    let environ: string;
    try {
      environ = await fs.promises.readFile(`/proc/${pid}/environ`, 'latin1');
    } catch {
      return; // Gone, or another user's.
    }
    for (const [, mark] of environ.matchAll(MARK_IN_ENVIRON)) {
      if (!requests.has(mark!)) continue;
      (found.get(mark!) ?? found.set(mark!, new Set()).get(mark!)!).add(pid);
    }
  });
  return found;
}
