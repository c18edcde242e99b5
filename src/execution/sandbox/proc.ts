import fs from 'node:fs';

/** One process as /proc/<pid>/stat describes it. */
export interface ProcessStat {
  pid: number;
  ppid: number;
  pgrp: number;
  /**
   * Not a zombie: a zombie keeps its pid (and kill(0) finds it) until it is reaped, and where PID 1 does not reap
   * orphans (containers without an init) that is never.
   */
  running: boolean;
  /** Clock ticks after boot at which it started (field 22): never earlier than its parent's. */
  startTime: number;
}

/**
 * /proc reads in flight at once. The reads go through libuv's thread pool (4 threads by default), which the rest of
 * the server needs too (transcripts, workspaces): a scan of every process must not queue hundreds of reads ahead of them.
 */
const READS_IN_FLIGHT = 4;

export function parseStat(pid: number, stat: string): ProcessStat {
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so fields are counted from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  return {
    pid,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    running: state !== 'Z' && state !== 'X',
    startTime: Number(fields[19]),
  };
}

/** The process's stat; undefined when it is gone (or there is no /proc). */
export async function readStat(pid: number): Promise<ProcessStat | undefined> {
  try {
    return parseStat(pid, await fs.promises.readFile(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return undefined;
  }
}

/** The ids of every process, from /proc; undefined where there is no /proc. */
export async function processIds(): Promise<number[] | undefined> {
  try {
    return (await fs.promises.readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return undefined;
  }
}

/** Calls `each` for every id, a few at a time; `each` must not throw. */
export async function forEachProcess(pids: number[], each: (pid: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < pids.length) await each(pids[next++]!);
  };
  await Promise.all(Array.from({ length: READS_IN_FLIGHT }, worker));
}

/** Every process, from /proc; undefined where there is no /proc. */
export async function processTable(): Promise<ProcessStat[] | undefined> {
  const pids = await processIds();
  if (!pids) return undefined;
  const table: ProcessStat[] = [];
  await forEachProcess(pids, async (pid) => {
    const stat = await readStat(pid);
    // Missing: it ended while we looked.
    if (stat) table.push(stat);
  });
  return table;
}
