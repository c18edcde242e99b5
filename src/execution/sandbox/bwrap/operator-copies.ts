import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RunUser } from '../backend.js';
import { runReadableFile } from '../run-readable-file.js';
import { blockingDirectory } from '../workspace-root.js';

/** An operator's file the run user cannot reach, and the copy of it the sandbox shows at its path instead. */
export interface OperatorCopy {
  file: string;
  copy: string;
  /** The directory in the way: left empty in the sandbox, where the copy's path is then made. */
  blocking: string;
}

/**
 * Copies of the operator's command files (a configured harness's script, its program) that the run user of a root
 * server cannot reach (issue 48: a checkout under /root, mode 0700, and its example harness). bwrap runs as that
 * user and could not bind them; the server reads them and the sandbox shows each copy, read-only, at the file's own
 * path. Only the files themselves: what else lies beside them (a package's modules) stays out of reach. The files
 * are the operator's, never a path an API caller or a run chose, and no secret (commandFileBinds shows them too).
 */
export function operatorCopies(files: string[], runAs: RunUser | undefined): OperatorCopy[] {
  if (!runAs || process.getuid?.() !== 0) return [];
  const copies: OperatorCopy[] = [];
  for (const candidate of new Set(files.filter((file) => path.isAbsolute(file)))) {
    let file: string;
    try {
      file = fs.realpathSync(candidate);
      if (!fs.statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    const blocking = blockingDirectory(path.dirname(file), runAs);
    if (!blocking) continue;
    const content = fs.readFileSync(file);
    const executable = (fs.statSync(file).mode & 0o111) !== 0;
    const name = `${createHash('sha256').update(file).update(content).digest('hex').slice(0, 16)}-${path.basename(file)}`;
    copies.push({ file, copy: runReadableFile(name, content, executable ? 0o755 : 0o644), blocking: blocking.path });
  }
  return copies;
}
