import fs from 'node:fs';

export class DataDirLockedError extends Error {}

export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes an exclusive lock on an embedded database directory. Two processes on one PGlite directory corrupt it
 * (measured: lost rows, duplicated ids), so a second process must stop instead. A lock left by a process that
 * died (SIGKILL, power loss) is taken over: its pid is no longer alive.
 */
export function acquireLockFile(lockPath: string): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx', 0o600);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (fs.readFileSync(lockPath, 'utf8').trim() === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(fs.readFileSync(lockPath, 'utf8').trim(), 10);
    if (Number.isInteger(holder) && holder !== process.pid && processIsAlive(holder)) {
      throw new DataDirLockedError(
        `another Hangar process (pid ${holder}) is using the embedded database (lock file ${lockPath}); ` +
          'stop it first, or point DATABASE_URL at PostgreSQL to run several replicas',
      );
    }
    fs.rmSync(lockPath, { force: true });
  }
  throw new DataDirLockedError(`could not take the lock file ${lockPath}`);
}
