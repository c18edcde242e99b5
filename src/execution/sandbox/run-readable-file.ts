import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** `hangar-run-files-<pid>-XXXXXX`: the pid says whose, so that a later process can remove a dead one's. */
const PREFIX = 'hangar-run-files-';

let directory: string | undefined;
const made = new Map<string, string>();
let holders = 0;

/**
 * A file of the server's that the run user must read (a sandbox binds it, or a clone run as that user reads it):
 * made once per process, in a directory of its own that only the server can write and everyone can pass through
 * (the system's temporary directory: the run user reaches it, wherever the data directory is). The directory goes
 * when the last holder lets go (releaseRunReadableFiles, at a server's or worker's stop), and one a killed process
 * left is removed by the next process that makes its own.
 */
export function runReadableFile(name: string, content: string | Buffer, mode = 0o644): string {
  const existing = made.get(name);
  if (existing) return existing;
  if (!directory) {
    removeDeadProcessesFiles();
    directory = fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
    fs.chmodSync(directory, 0o711);
  }
  const file = path.join(directory, name);
  fs.writeFileSync(file, content, { mode, flag: 'wx' });
  fs.chmodSync(file, mode);
  made.set(name, file);
  return file;
}

/** A server or worker that may make run-readable files holds them until it stops; returns its release. */
export function holdRunReadableFiles(): () => void {
  holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders--;
    if (holders === 0) removeRunReadableFiles();
  };
}

function removeRunReadableFiles(): void {
  if (directory) fs.rmSync(directory, { recursive: true, force: true });
  directory = undefined;
  made.clear();
}

/** The directories of processes that are gone (killed before their stop). */
function removeDeadProcessesFiles(): void {
  const names = fs.readdirSync(os.tmpdir(), { withFileTypes: true });
  for (const entry of names) {
    const pid = new RegExp(`^${PREFIX}(\\d+)-`).exec(entry.name)?.[1];
    if (!pid || !entry.isDirectory() || alive(Number(pid))) continue;
    try {
      fs.rmSync(path.join(os.tmpdir(), entry.name), { recursive: true, force: true });
    } catch {
      // Another user's (a sticky /tmp keeps it theirs): theirs to remove.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
