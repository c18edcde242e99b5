import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The git configuration a clone runs with as the run user: `safe.directory = *`. The source is the operator's
 * HANGAR_GIT_BASE_URL; a local one (`file:`) belongs to another user than the run user, and git refuses to read a
 * repository of another owner. Command-line config (`-c`, GIT_CONFIG_COUNT) does not reach the upload-pack of a
 * local clone (git clears it for local transports), so it has to be a file: made once per process, in a directory
 * of its own that only the server can write and everyone can pass through.
 */
let file: string | undefined;

export function cloneGitConfig(): string {
  if (file) return file;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-clone-config-'));
  fs.chmodSync(directory, 0o711);
  const made = path.join(directory, 'gitconfig');
  fs.writeFileSync(made, '[safe]\n\tdirectory = *\n', { mode: 0o644, flag: 'wx' });
  file = made;
  return made;
}
