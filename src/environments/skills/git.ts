import { GitFetchError, GitObjectCache } from '../../platform/git/object-cache.js';
import { execFileAsync } from '../../platform/spawn/index.js';
import { type RepoRef, repoKey } from '../github.js';

const run = execFileAsync;

export { GitFetchError };

export interface TreeFile {
  path: string;
  size: number;
}

const TIMEOUT_MS = 120_000;
/** Enough for a tree listing of the skill folders or one SKILL.md (those are capped far below this). */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * Remote repositories read with real git at a fetched revision, from the server's git object cache (the same
 * mirrors the workspaces clone from: one fetch serves both). git runs without a shell, never prompts for
 * credentials, and is killed after two minutes.
 */
export class GitMirror {
  private readonly cache: GitObjectCache;

  constructor(private readonly options: { baseUrl: string; cacheDir: string; maxBytes?: number }) {
    this.cache = GitObjectCache.shared(options.cacheDir, options.maxBytes ?? Number.MAX_SAFE_INTEGER);
  }

  private directory(ref: RepoRef): string {
    return this.cache.mirrorPath(repoKey(ref));
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

  /** Fetches the repository into its mirror and returns the commit of its default branch. */
  async fetchHead(ref: RepoRef): Promise<string> {
    const key = repoKey(ref);
    try {
      return (await this.cache.update(key, this.url(ref))).head;
    } catch (error) {
      // The cache names the repository as it is keyed; the caller's spelling reads better.
      throw new GitFetchError((error as Error).message.split(key).join(`${ref.owner}/${ref.repo}`));
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
}
