import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileAsync } from '../platform/spawn/index.js';

/** A git command that failed, with what git (and GitHub's git server: `remote: ...`) said, and no command line. */
export class PushRefused extends Error {
  constructor(
    message: string,
    readonly stderr = '',
  ) {
    super(message);
  }
}

/**
 * The server's own git, in a bare repository it creates for one publication: the run's commits arrive as a bundle
 * (plain data the run made in its sandbox; git checks every object it takes from it), never by reading the run's
 * repository, whose configuration and hooks are the run's. Nothing of the operator's or the run's configuration
 * applies (no system or global file, no hooks); the token reaches git through a credential helper reading this
 * process's environment, never a command line or a URL.
 */
export class PublishRepository {
  private constructor(
    private readonly directory: string,
    private readonly token: string,
  ) {}

  static async create(token: string): Promise<PublishRepository> {
    const directory = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'hangar-publish-'));
    const repository = new PublishRepository(directory, token);
    await repository.git(['init', '--quiet', '--bare', 'repo.git'], directory);
    return repository;
  }

  private get repo(): string {
    return path.join(this.directory, 'repo.git');
  }

  /** Takes the bundle's HEAD as refs/heads/publish; returns its commit. */
  async takeBundle(bundle: Buffer): Promise<string> {
    const file = path.join(this.directory, 'changes.bundle');
    await fs.promises.writeFile(file, bundle, { mode: 0o600 });
    await this.git(['fetch', '--quiet', '--no-tags', file, '+HEAD:refs/heads/publish']);
    return this.revParse('refs/heads/publish');
  }

  /** Fetches `branch` of the remote as refs/remotes/<name>; false when the remote has no such branch. */
  async fetchBranch(url: string, branch: string, name: string): Promise<boolean> {
    try {
      await this.git(['fetch', '--quiet', '--no-tags', url, `+refs/heads/${branch}:refs/remotes/${name}`]);
      return true;
    } catch (error) {
      if (/couldn't find remote ref/i.test((error as PushRefused).stderr)) return false;
      throw error;
    }
  }

  /** Commits in refs/heads/publish that `ref` does not have. */
  async commitsAhead(ref: string): Promise<number> {
    const out = await this.git(['rev-list', '--count', `${ref}..refs/heads/publish`]);
    return Number(out.trim());
  }

  async push(url: string, branch: string): Promise<void> {
    await this.git(['push', '--quiet', '--porcelain', url, `refs/heads/publish:refs/heads/${branch}`]);
  }

  async remove(): Promise<void> {
    await fs.promises.rm(this.directory, { recursive: true, force: true });
  }

  private async revParse(ref: string): Promise<string> {
    return (await this.git(['rev-parse', '--verify', ref])).trim();
  }

  private async git(args: string[], cwd = this.repo): Promise<string> {
    // The error of a failed command names its command line; what git said is enough (and says it better).
    const { stdout } = await execFileAsync(
      'git',
      [
        '-c',
        'core.hooksPath=/dev/null',
        '-c',
        'transfer.fsckObjects=true',
        '-c',
        'credential.helper=',
        '-c',
        'credential.helper=!f() { echo username=x-access-token; echo "password=$HANGAR_GIT_PASSWORD"; }; f',
        ...args,
      ],
      {
        cwd,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: this.directory,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_TERMINAL_PROMPT: '0',
          HANGAR_GIT_PASSWORD: this.token,
        },
        maxBuffer: 4 * 1024 * 1024,
        timeout: 5 * 60_000,
      },
    ).catch((error: unknown) => {
      throw new PushRefused(gitReason(error), String((error as { stderr?: string }).stderr ?? ''));
    });
    return stdout;
  }
}

/** What git printed when it failed: the remote's lines and the rejection, without progress noise. */
function gitReason(error: unknown): string {
  const stderr = String((error as { stderr?: string }).stderr ?? '');
  const stdout = String((error as { stdout?: string }).stdout ?? '');
  const lines = `${stderr}\n${stdout}`
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^(To |Done$|hint:)/.test(line));
  return lines.join('\n').slice(0, 2000) || (error as Error).message;
}
