import fs from 'node:fs';

/**
 * CPU accounting from /proc (Linux). On 2 shared cores another process's burst can halve a figure, so each
 * measurement says how busy everything else was; and CPU time per request (this process plus its PostgreSQL
 * backends) compares the two servers' cost even when throughput is disturbed. Ticks are 1/100 s (USER_HZ).
 */
const TICKS_PER_SECOND = 100;

/** utime + stime of a process and its command name; undefined if it is gone. */
function processTicks(pid: number | string): { name: string; ticks: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces; the counters follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ticks: Number(fields[11]) + Number(fields[12]),
    };
  } catch {
    return undefined;
  }
}

function machineBusyTicks(): number {
  const [, user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .map(Number);
  return user + nice + system + irq + softirq + steal;
}

/** Every PostgreSQL process on this machine, ours and other databases' alike. */
function postgresTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const found = processTicks(pid);
    if (found?.name === 'postgres') ticks.set(pid, found.ticks);
  }
  return ticks;
}

export interface CpuReport {
  /** CPU used by processes other than this one, the load generator and PostgreSQL, in % of one core. */
  othersPercent: number;
  /** This process (the servers; with PGlite, the database too). */
  serverSeconds: number;
  /** The PostgreSQL backends serving this benchmark's database. */
  ourBackendSeconds: number;
  /** Every PostgreSQL process of the machine (backends, WAL writer, checkpointer, ...). */
  postgresSeconds: number;
}

/**
 * Starts counting. `ourBackends` are the PIDs of the backends connected to the benchmark's database (empty on
 * PGlite, or when PostgreSQL runs on another machine and its PIDs mean nothing here).
 */
export function watchCpu(loadGeneratorPid: number, ourBackends: number[]): (() => CpuReport) | undefined {
  if (!fs.existsSync('/proc/stat')) return undefined;
  const startBusy = machineBusyTicks();
  const startSelf = processTicks(process.pid)?.ticks ?? 0;
  const startGenerator = processTicks(loadGeneratorPid)?.ticks ?? 0;
  const startPostgres = postgresTicks();
  const startedAt = process.hrtime.bigint();
  return () => {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const self = (processTicks(process.pid)?.ticks ?? 0) - startSelf;
    const generator = (processTicks(loadGeneratorPid)?.ticks ?? startGenerator) - startGenerator;
    // Per process, so that a backend which started or ended meanwhile does not count its whole life.
    let postgres = 0;
    let ourBackendTicks = 0;
    for (const [pid, ticks] of postgresTicks()) {
      const used = ticks - (startPostgres.get(pid) ?? 0);
      postgres += used;
      if (ourBackends.includes(Number(pid))) ourBackendTicks += used;
    }
    const others = machineBusyTicks() - startBusy - self - generator - postgres;
    return {
      othersPercent: (Math.max(0, others) / TICKS_PER_SECOND / seconds) * 100,
      serverSeconds: self / TICKS_PER_SECOND,
      ourBackendSeconds: ourBackendTicks / TICKS_PER_SECOND,
      postgresSeconds: postgres / TICKS_PER_SECOND,
    };
  };
}
