// The memory of a process and every process below it, read from /proc (Linux only): what `top` or `ps` show a
// person (resident set size, summed) and the proportional set size (shared pages split between the processes
// that map them), which does not count a shared library twice.
import fs from 'node:fs';

export interface TreeMemory {
  /** Every process of the tree, the root first: pid, command name and its own figures in MB. */
  processes: { pid: number; name: string; rssMb: number; pssMb: number; peakRssMb: number }[];
  rssMb: number;
  pssMb: number;
}

const MB = 1024 * 1024;

function children(): Map<number, number[]> {
  const byParent = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // The command name is in parentheses and may hold spaces: the parent pid is the second field after it.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    byParent.set(parent, [...(byParent.get(parent) ?? []), Number(entry)]);
  }
  return byParent;
}

function kilobytes(text: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) * 1024 : 0;
}

export function treeMemory(root: number): TreeMemory {
  const byParent = children();
  const pids: number[] = [];
  for (const queue = [root]; queue.length > 0; ) {
    const pid = queue.shift()!;
    pids.push(pid);
    queue.push(...(byParent.get(pid) ?? []));
  }
  const processes: TreeMemory['processes'] = [];
  for (const pid of pids) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      processes.push({
        pid,
        name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '?',
        rssMb: kilobytes(status, 'VmRSS') / MB,
        pssMb: kilobytes(rollup, 'Pss') / MB,
        peakRssMb: kilobytes(status, 'VmHWM') / MB,
      });
    } catch {
      // ended between the listing and the read
    }
  }
  const sum = (pick: (process: TreeMemory['processes'][number]) => number) =>
    processes.reduce((total, process) => total + pick(process), 0);
  return { processes, rssMb: sum((p) => p.rssMb), pssMb: sum((p) => p.pssMb) };
}
