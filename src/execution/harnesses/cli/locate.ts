import fs from 'node:fs';
import path from 'node:path';

/**
 * Where an executable is: `name` itself when it is a path (an operator-configured one), else the first match on
 * `pathEnv` as a shell would find it. Undefined when there is no such executable file.
 */
export function locateBinary(name: string, pathEnv: string | undefined): string | undefined {
  const candidates = name.includes('/')
    ? [path.resolve(name)]
    : (pathEnv ?? '')
        .split(path.delimiter)
        .filter((directory) => path.isAbsolute(directory))
        .map((directory) => path.join(directory, name));
  return candidates.find(isExecutableFile);
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
