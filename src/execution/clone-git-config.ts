import { runReadableFile } from './sandbox/run-readable-file.js';

/**
 * The git configuration a clone runs with as the run user: `safe.directory = *`. The source is the operator's
 * HANGAR_GIT_BASE_URL; a local one (`file:`) belongs to another user than the run user, and git refuses to read a
 * repository of another owner. Command-line config (`-c`, GIT_CONFIG_COUNT) does not reach the upload-pack of a
 * local clone (git clears it for local transports), so it has to be a file.
 */
export function cloneGitConfig(): string {
  return runReadableFile('gitconfig', '[safe]\n\tdirectory = *\n');
}
