import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Directories that belong to the host's system: never bound over the image's own. */
const SYSTEM = new Set([
  '/',
  '/usr',
  '/usr/local',
  '/opt',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  '/etc',
  '/home',
  '/root',
  '/tmp',
  '/var',
]);

/**
 * The host paths a run's container gets read-only at the same path, so that harnesses find what they find under
 * bwrap: Hangar's built `dist` and `node_modules`, each agent CLI's install, and the files an operator's command
 * harness names. Nothing that holds or lies inside a hidden path (the data directory, the workspaces) is included.
 */
export function containerRuntimePaths(options: {
  /** The operator's command harnesses' argv: absolute paths to existing files are bound. */
  commands: string[][];
  /** The agent CLIs' executables as located on the host. */
  binaries: string[];
  hiddenPaths: string[];
}): string[] {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
  const wanted = [path.join(root, 'dist'), path.join(root, 'node_modules')];
  // A system program a harness names (/bin/true, /usr/bin/python3) is the image's own, never bound over it; the
  // server's node is Hangar's, at /opt/hangar/bin/node (the backend translates it).
  for (const argv of options.commands)
    for (const arg of argv)
      if (path.isAbsolute(arg) && isFile(arg) && !inSystem(arg) && arg !== process.execPath) wanted.push(realPath(arg));
  for (const binary of options.binaries) {
    const directory = path.dirname(binary);
    // An install of its own (`<prefix>/bin/claude` linking into `<prefix>/lib/...`): the whole prefix.
    if (path.basename(directory) === 'bin' && !SYSTEM.has(path.dirname(directory)))
      wanted.push(path.dirname(directory));
    else wanted.push(packageRoot(realPath(binary)));
  }
  const hidden = options.hiddenPaths.map(realPath);
  const overlaps = (candidate: string) =>
    hidden.some((secret) => within(secret, candidate) || within(candidate, secret));
  const existing = wanted.map(realPath).filter((candidate) => fs.existsSync(candidate) && !overlaps(candidate));
  // A path inside another one is bound already.
  return [...new Set(existing)].filter(
    (candidate) => !existing.some((other) => other !== candidate && within(candidate, other)),
  );
}

function inSystem(file: string): boolean {
  return /^\/(usr|bin|sbin|lib|lib32|lib64|libx32|etc)\//.test(file);
}

/** The directory of the npm package a file belongs to (the nearest with a package.json), else its own directory. */
function packageRoot(file: string): string {
  for (let directory = path.dirname(file); directory !== path.dirname(directory); directory = path.dirname(directory))
    if (fs.existsSync(path.join(directory, 'package.json'))) return directory;
  return path.dirname(file);
}

function within(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
