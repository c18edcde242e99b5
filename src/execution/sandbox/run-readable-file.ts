import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = new Map<string, string>();

/**
 * A file of the server's that the run user must read (a sandbox binds it, or a clone run as that user reads it):
 * made once per process, in a directory of its own that only the server can write and everyone can pass through.
 */
export function runReadableFile(name: string, content: string): string {
  const existing = made.get(name);
  if (existing) return existing;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-run-files-'));
  fs.chmodSync(directory, 0o711);
  const file = path.join(directory, name);
  fs.writeFileSync(file, content, { mode: 0o644, flag: 'wx' });
  made.set(name, file);
  return file;
}
