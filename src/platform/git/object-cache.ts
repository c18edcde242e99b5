import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFileAsync } from '../spawn/index.js';

const run = execFileAsync;

/** A repository could not be fetched (unknown, unreachable, or git failed); the message is safe to show. */
export class GitFetchError extends Error {}

export interface MirrorState {
  /** The bare mirror, in the server's data directory: only the server writes there. */
  directory: string;
  /** The commit of the remote's default branch after the fetch. */
  head: string;
}

const TIMEOUT_MS = 120_000;
/** Touched whenever a mirror is used: its modification time orders the eviction. */
const USED_MARK = 'hangar-last-used';
/** Eviction walks the cache at most this often per process: it costs a `du` per mirror. */
const EVICTION_INTERVAL_MS = 60_000;

/**
 * One bare mirror per repository under the server's data directory, shared by the workspaces' clones and the skills
 * catalogue. Concurrent callers of `update` for one repository share one fetch (an in-process single flight). Replicas
 * that share a data directory rely on git's own locking: objects are written under temporary names and renamed, and
 * each ref is updated under its lock file, so two fetches into one mirror cannot corrupt it; the one that loses a
 * ref lock is tried once more. A new mirror is made in a temporary directory and renamed into place.
 *
 * Clones never borrow from the mirror (no alternates): a run could otherwise write where the mirror's objects are. A
 * root server's clones hard-link the mirror's object files, which stay root's and read-only (0444, as git makes
 * them) in every checkout (see execution/workspace/linked-clone.ts); git never changes an object file in place (it writes new
 * ones under temporary names and renames them, and a gc unlinks old ones), so a linked file keeps its bytes. A
 * server whose runs share its uid copies the packs instead (`--no-hardlinks`). Either way, nothing a run does in its
 * checkout reaches the mirror.
 *
 * The URL is named at every fetch (never stored in the mirror), so a changed base URL takes effect at once and its
 * credentials are not kept on disk.
 */
export class GitObjectCache {
  private static readonly instances = new Map<string, GitObjectCache>();

  /** The process's cache for `directory`: one per directory, so its single flights cover every user in the process. */
  static shared(directory: string, maxBytes: number): GitObjectCache {
    const resolved = path.resolve(directory);
    let cache = GitObjectCache.instances.get(resolved);
    if (!cache) {
      cache = new GitObjectCache(resolved, maxBytes);
      GitObjectCache.instances.set(resolved, cache);
    }
    cache.maxBytes = maxBytes;
    return cache;
  }

  private readonly fetches = new Map<string, Promise<MirrorState>>();
  /** Mirrors a caller is reading now (a clone, a bundle): eviction leaves them. */
  private readonly inUse = new Map<string, number>();
  private lastEviction = 0;

  private constructor(
    readonly directory: string,
    private maxBytes: number,
  ) {}

  /** Where `owner/repo` is mirrored; the names are checked against GitHub's rules, so they are safe path segments. */
  mirrorPath(repoKey: string): string {
    const [owner, repo] = repoKey.split('/') as [string, string];
    return path.join(this.directory, owner, `${repo}.git`);
  }

  /**
   * Brings the mirror of `repoKey` up to date with `url` and returns where it is and its default branch's commit.
   * A fetch already in flight for the same repository is joined rather than repeated.
   */
  update(repoKey: string, url: string): Promise<MirrorState> {
    const running = this.fetches.get(repoKey);
    if (running) return running;
    const fetching = this.fetch(repoKey, url).finally(() => this.fetches.delete(repoKey));
    this.fetches.set(repoKey, fetching);
    return fetching;
  }

  /** Runs `use` while the mirror of `repoKey` is protected from eviction. */
  async reading<T>(repoKey: string, use: () => Promise<T>): Promise<T> {
    this.inUse.set(repoKey, (this.inUse.get(repoKey) ?? 0) + 1);
    try {
      return await use();
    } finally {
      const left = (this.inUse.get(repoKey) ?? 1) - 1;
      if (left === 0) this.inUse.delete(repoKey);
      else this.inUse.set(repoKey, left);
    }
  }

  /** The commits that changed between two commits of the mirror: the paths they touch. */
  async changedPaths(repoKey: string, from: string, to: string): Promise<string[]> {
    const output = await this.git(this.mirrorPath(repoKey), ['diff', '--name-only', '-z', from, to, '--']);
    return output.split('\0').filter(Boolean);
  }

  /**
   * A bundle of what `to` adds over `from` (the whole history when `from` is unknown to the mirror), written to
   * `file`: what a checkout at `from` needs to move to `to` without reaching the mirror. Returns the ref the bundle
   * carries `to` under.
   */
  async bundle(repoKey: string, from: string, to: string, file: string): Promise<string> {
    const mirror = this.mirrorPath(repoKey);
    // A ref is needed for the bundle to carry the commit: a temporary one, named for this bundle.
    const ref = `refs/hangar/bundle-${randomBytes(6).toString('hex')}`;
    await this.git(mirror, ['update-ref', ref, to]);
    try {
      await this.git(mirror, ['bundle', 'create', '--quiet', file, ref, `^${from}`]).catch(() =>
        this.git(mirror, ['bundle', 'create', '--quiet', file, ref]),
      );
      return ref;
    } finally {
      await this.git(mirror, ['update-ref', '-d', ref]).catch(() => undefined);
    }
  }

  /** Removes mirrors, least recently used first, until the cache is within its size bound (at most once a minute). */
  async evict(force = false): Promise<number> {
    if (!force && Date.now() - this.lastEviction < EVICTION_INTERVAL_MS) return 0;
    this.lastEviction = Date.now();
    const mirrors: Array<{ key: string; directory: string; used: number; bytes: number }> = [];
    for (const owner of await fs.promises.readdir(this.directory).catch(() => [] as string[])) {
      if (owner.startsWith('.')) continue;
      for (const name of await fs.promises.readdir(path.join(this.directory, owner)).catch(() => [] as string[])) {
        if (!name.endsWith('.git')) continue;
        const directory = path.join(this.directory, owner, name);
        const used = await fs.promises.stat(path.join(directory, USED_MARK)).then(
          (stat) => stat.mtimeMs,
          () => 0,
        );
        mirrors.push({ key: `${owner}/${name.slice(0, -4)}`, directory, used, bytes: await diskBytes(directory) });
      }
    }
    let total = mirrors.reduce((sum, mirror) => sum + mirror.bytes, 0);
    let removed = 0;
    for (const mirror of mirrors.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      if (this.inUse.has(mirror.key) || this.fetches.has(mirror.key)) continue;
      await fs.promises.rm(mirror.directory, { recursive: true, force: true });
      total -= mirror.bytes;
      removed++;
    }
    return removed;
  }

  private async fetch(repoKey: string, url: string): Promise<MirrorState> {
    const directory = this.mirrorPath(repoKey);
    try {
      // A mirror of the skills' former shallow cache cannot serve clones: it is made again, whole.
      if (fs.existsSync(path.join(directory, 'shallow'))) await fs.promises.rm(directory, { recursive: true });
      if (!fs.existsSync(path.join(directory, 'HEAD'))) await this.create(directory, url);
      else await this.fetchInto(directory, url);
      const head = (await this.git(directory, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
      const now = new Date();
      await fs.promises.writeFile(path.join(directory, USED_MARK), '').catch(() => undefined);
      await fs.promises.utimes(path.join(directory, USED_MARK), now, now).catch(() => undefined);
      void this.evict().catch(() => undefined);
      return { directory, head };
    } catch (error) {
      throw new GitFetchError(`could not fetch ${repoKey}: ${gitReason(error, url, repoKey)}`);
    }
  }

  private async fetchInto(directory: string, url: string): Promise<void> {
    const args = ['fetch', '--quiet', '--prune', '--', url, '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];
    // Another replica fetching into the same mirror may hold a ref's lock: once more, after it.
    await this.git(directory, args).catch(() => this.git(directory, args));
  }

  /** A new mirror: made aside, with HEAD naming the remote's default branch, then renamed into place. */
  private async create(directory: string, url: string): Promise<void> {
    // Readable by the run user (who clones as itself) whatever the server's umask; writable by the server alone.
    for (const level of [this.directory, path.dirname(directory)]) {
      await fs.promises.mkdir(level, { recursive: true });
      await fs.promises.chmod(level, 0o755);
    }
    const aside = `${directory}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await run('git', ['init', '--bare', '--quiet', '--shared=0644', aside], { timeout: TIMEOUT_MS });
      const remoteHead = await this.git(aside, ['ls-remote', '--symref', '--', url, 'HEAD']);
      const branch = /^ref: (refs\/heads\/\S+)\tHEAD$/m.exec(remoteHead)?.[1];
      if (branch) await this.git(aside, ['symbolic-ref', 'HEAD', branch]);
      await this.fetchInto(aside, url);
      await fs.promises.rename(aside, directory).catch(async (error: NodeJS.ErrnoException) => {
        // Another replica made it meanwhile: theirs is used, ours goes.
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await fs.promises.rm(aside, { recursive: true, force: true });
    }
  }

  private async git(directory: string, args: string[]): Promise<string> {
    const { stdout } = await run('git', ['-C', directory, ...args], {
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
      timeout: TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
      encoding: 'utf8',
    });
    return stdout;
  }
}

/** Bytes a directory takes on disk (`du`, which follows no link). */
export async function diskBytes(directory: string): Promise<number> {
  const { stdout } = await run('du', ['-sk', '--', directory], { timeout: TIMEOUT_MS }).catch(() => ({ stdout: '0' }));
  return Number.parseInt(String(stdout), 10) * 1024 || 0;
}

/** git's own reason, with the repository's location (which may carry credentials) replaced by its name. */
export function gitReason(error: unknown, url: string, name: string): string {
  const failure = error as { stderr?: string; killed?: boolean; message?: string };
  if (failure.killed) return `git took longer than ${TIMEOUT_MS / 1000} s`;
  const lines = String(failure.stderr ?? failure.message ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  let reason = lines.find((line) => line.startsWith('fatal:')) ?? lines[lines.length - 1] ?? 'git failed';
  const spellings = [url];
  try {
    const location = new URL(url);
    const withoutCredentials = new URL(location);
    withoutCredentials.username = '';
    withoutCredentials.password = '';
    spellings.push(location.href, withoutCredentials.href, decodeURIComponent(location.pathname));
  } catch {
    // Not a URL (a bare path): its own spelling is enough.
  }
  for (const spelling of spellings.sort((a, b) => b.length - a.length)) {
    reason = reason.split(spelling.replace(/\/$/, '')).join(name);
  }
  return reason;
}
