import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoKey, type RepoRef } from '../github.js';

const run = promisify(execFile);

/** A repository could not be fetched (unknown, unreachable, or git failed); the message is safe to show. */
export class GitFetchError extends Error {}

export interface TreeFile {
  path: string;
  size: number;
}

/** Where the fetched head of the default branch is kept in each cached clone. */
const HEAD_REF = 'refs/hangar/head';
const TIMEOUT_MS = 120_000;
/** Enough for a tree listing of the skill folders or one SKILL.md (those are capped far below this). */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * Bare clones of remote repositories under one cache directory, read with real git at a fetched revision.
 * Fetches are shallow (only the head of the default branch is needed) and name the URL each time, so a changed
 * base URL takes effect without touching the cache. git runs without a shell, never prompts for credentials,
 * and is killed after two minutes.
 */
export class GitMirror {
  constructor(private readonly options: { baseUrl: string; cacheDir: string }) {}

  private directory(ref: RepoRef): string {
    // Owner and repository names are checked against GitHub's rules, so they are safe path segments.
    const [owner, repo] = repoKey(ref).split('/') as [string, string];
    return path.join(this.options.cacheDir, owner, `${repo}.git`);
  }

  private url(ref: RepoRef): string {
    return `${this.options.baseUrl}/${ref.owner}/${ref.repo}`;
  }

  private async git(ref: RepoRef, args: string[]): Promise<string> {
    const { stdout } = await run('git', ['-C', this.directory(ref), ...args], {
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
      timeout: TIMEOUT_MS,
      maxBuffer: MAX_OUTPUT_BYTES,
      encoding: 'utf8',
    });
    return stdout;
  }

  /** Fetches the head of the default branch and returns its commit. */
  async fetchHead(ref: RepoRef): Promise<string> {
    const directory = this.directory(ref);
    try {
      if (!fs.existsSync(path.join(directory, 'HEAD'))) {
        fs.mkdirSync(directory, { recursive: true });
        await run('git', ['init', '--bare', '--quiet', directory], { timeout: TIMEOUT_MS });
      }
      await this.git(ref, ['fetch', '--quiet', '--no-tags', '--depth=1', this.url(ref), `+HEAD:${HEAD_REF}`]);
      return (await this.git(ref, ['rev-parse', '--verify', `${HEAD_REF}^{commit}`])).trim();
    } catch (error) {
      throw new GitFetchError(`could not fetch ${ref.owner}/${ref.repo}: ${this.reason(ref, error)}`);
    }
  }

  /** Regular files (no symlinks or submodules) under `roots` at `commit`, with their sizes. */
  async listFiles(ref: RepoRef, commit: string, roots: readonly string[]): Promise<TreeFile[]> {
    const output = await this.git(ref, ['ls-tree', '-r', '-l', '-z', commit, '--', ...roots]);
    const files: TreeFile[] = [];
    for (const entry of output.split('\0')) {
      // "<mode> <type> <object> <size>\t<path>"
      const match = /^(\d+) blob [0-9a-f]+ +(\d+)\t(.+)$/s.exec(entry);
      if (match && (match[1] === '100644' || match[1] === '100755'))
        files.push({ path: match[3]!, size: Number(match[2]) });
    }
    return files;
  }

  async readFile(ref: RepoRef, commit: string, filePath: string): Promise<string> {
    return this.git(ref, ['cat-file', 'blob', `${commit}:${filePath}`]);
  }

  /** git's own reason, with the repository's location (which may carry credentials) replaced by its name. */
  private reason(ref: RepoRef, error: unknown): string {
    const failure = error as { stderr?: string; killed?: boolean; message?: string };
    if (failure.killed) return `git took longer than ${TIMEOUT_MS / 1000} s`;
    const lines = (failure.stderr ?? failure.message ?? '')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    let reason = lines.find((line) => line.startsWith('fatal:')) ?? lines[lines.length - 1] ?? 'git failed';
    const location = new URL(this.url(ref));
    const withoutCredentials = new URL(location);
    withoutCredentials.username = '';
    withoutCredentials.password = '';
    const spellings = [location.href, withoutCredentials.href, this.url(ref), decodeURIComponent(location.pathname)];
    for (const spelling of spellings.sort((a, b) => b.length - a.length)) {
      reason = reason.split(spelling.replace(/\/$/, '')).join(`${ref.owner}/${ref.repo}`);
    }
    return reason;
  }
}
