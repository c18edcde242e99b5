// Preloaded (--import) into each measured process: at exit, appends the process's own CPU time (user + system, ms)
// to the file BENCH_CPU_FILE names. Node cannot read a child's resource usage, so the child reports its own.
import fs from 'node:fs';

process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  fs.appendFileSync(process.env.BENCH_CPU_FILE, `${(user + system) / 1000}\n`);
});
