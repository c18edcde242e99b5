import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

type LockEntry = {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
} & Record<string, unknown>;

/**
 * A package.json and package-lock.json for `roots`, cut out of Hangar's own lockfile: every package of their closure
 * is then in the npm cache `npm ci` filled for Hangar, so the fixture's `npm ci --offline` needs no registry.
 */
export function fixtureLock(
  hangarLockFile: string,
  roots: string[],
): { packageJson: string; lock: string; count: number } {
  const hangar = JSON.parse(fs.readFileSync(hangarLockFile, 'utf8')) as { packages: Record<string, LockEntry> };
  const packages = hangar.packages;
  const kept = new Map<string, LockEntry>();
  // Node's resolution in the lockfile's tree: the nearest node_modules/<name> going up from the dependent.
  const resolve = (from: string, name: string): string | undefined => {
    let base = from;
    for (;;) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (packages[candidate]) return candidate;
      if (!base) return undefined;
      const cut = base.lastIndexOf('/node_modules/');
      base = cut < 0 ? '' : base.slice(0, cut);
    }
  };
  const visit = (location: string) => {
    if (kept.has(location)) return;
    const entry = packages[location]!;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...rest } = entry as Record<string, unknown>;
    // With the tarball's address, npm needs no package document (which the cache may not hold).
    const name = location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
    kept.set(location, { ...rest, resolved: tarballUrl(name, entry.version!) } as LockEntry);
    for (const name of Object.keys(entry.dependencies ?? {})) {
      const found = resolve(location, name);
      if (found) visit(found);
    }
  };
  const dependencies: Record<string, string> = {};
  for (const name of roots) {
    const location = `node_modules/${name}`;
    if (!packages[location]) throw new Error(`${name} is not in Hangar's lockfile`);
    dependencies[name] = packages[location]!.version!;
    visit(location);
  }
  // Hangar's overrides shaped its lockfile: the fixture keeps them, or npm would find the lock out of date.
  const { overrides } = JSON.parse(
    fs.readFileSync(hangarLockFile.replace(/package-lock\.json$/, 'package.json'), 'utf8'),
  );
  const root = { name: 'fixture', version: '1.0.0', private: true, dependencies, overrides };
  const lock = {
    name: 'fixture',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'fixture', version: '1.0.0', dependencies }, ...Object.fromEntries(kept) },
  };
  return {
    packageJson: `${JSON.stringify(root, null, 2)}\n`,
    lock: `${JSON.stringify(lock, null, 2)}\n`,
    count: kept.size,
  };
}

/**
 * Copies into `to` only the entries of the npm cache `from` that the lockfile's packages need (their tarballs'
 * contents and index entries): a cache of a few megabytes that setup copies into its HOME, since npm does not
 * install from a cache it cannot write (and the sandbox's view of the host is read-only).
 */
export function trimmedCache(from: string, to: string, lockText: string): void {
  const lock = JSON.parse(lockText) as { packages: Record<string, { version?: string; integrity?: string }> };
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (!location || !entry.integrity || !entry.version) continue;
    const name = location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const [algorithm, digest] = entry.integrity.split('-') as [string, string];
    const hex = Buffer.from(digest, 'base64').toString('hex');
    const content = path.join('_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
    const key = `make-fetch-happen:request-cache:${tarballUrl(name, entry.version)}`;
    const bucket = createHash('sha256').update(key).digest('hex');
    const index = path.join('_cacache', 'index-v5', bucket.slice(0, 2), bucket.slice(2, 4), bucket.slice(4));
    for (const file of [content, index]) {
      if (!fs.existsSync(path.join(from, file))) throw new Error(`${name}@${entry.version} is not in ${from}`);
      fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
      fs.copyFileSync(path.join(from, file), path.join(to, file));
    }
  }
}

function tarballUrl(name: string, version: string): string {
  return `https://registry.npmjs.org/${name}/-/${name.split('/').at(-1)}-${version}.tgz`;
}
