import fs from 'node:fs';
import path from 'node:path';

/** The directories a bwrap sandbox replaces with an empty tmpfs (bwrapArguments): anything under them is gone. */
export const SANDBOX_PRIVATE_DIRECTORIES = ['/tmp', '/run'];

/**
 * What a sandboxed command needs to see of its own files when they live under a directory the sandbox makes
 * private: a harness script in a checkout under /tmp (issue 26) would otherwise be missing inside, and node fail with
 * "Cannot find module". For each argument that is an existing absolute path (the program included, as PATH finds
 * it), the directory to bind read-only (for files only, never a directory argument): the package the file belongs to (the nearest directory with a
 * package.json, so its node_modules come along), or else the file's own directory, or only the file when that
 * directory is the private one itself (never all of /tmp). The command is the operator's (a configured harness or
 * MCP server, or a setup command's shell), so its files are no secret; hidden paths are covered again afterwards.
 */
export function commandFileBinds(argv: string[], program: string | undefined): string[] {
  const candidates = [program, ...argv].filter((arg): arg is string => !!arg && path.isAbsolute(arg));
  const binds = new Set<string>();
  for (const candidate of candidates) {
    const file = realPath(candidate);
    const privateRoot = SANDBOX_PRIVATE_DIRECTORIES.find((root) => file.startsWith(`${root}/`));
    if (!privateRoot) continue;
    // Only files (a script, the program): a directory in the arguments is data the command works on, which the
    // sandbox must not be handed because the operator named it.
    if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
    const directory = path.dirname(file);
    binds.add(packageRoot(directory, privateRoot) ?? (directory === privateRoot ? file : directory));
  }
  // An ancestor's bind already shows its descendants.
  const sorted = [...binds].sort((a, b) => a.length - b.length);
  return sorted.filter((bind, index) => !sorted.slice(0, index).some((outer) => bind.startsWith(`${outer}/`)));
}

/** The nearest directory from `directory` up to (not including) `stop` that holds a package.json. */
function packageRoot(directory: string, stop: string): string | undefined {
  for (let current = directory; current !== stop && current.startsWith(`${stop}/`); current = path.dirname(current)) {
    if (fs.existsSync(path.join(current, 'package.json'))) return current;
  }
  return undefined;
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
