import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Real git repositories for tests: bare repositories laid out as `<root>/<owner>/<repo>`, so that
 * `HANGAR_GIT_BASE_URL=file://<root>` serves them the way https://github.com serves real ones.
 */
export class GitFixtures {
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-git-'));

  constructor() {
    // A root server clones as its run user (64000): the repositories must be readable by everyone.
    fs.chmodSync(this.root, 0o755);
  }

  get baseUrl(): string {
    return `file://${this.root}`;
  }

  private git(cwd: string, args: string[]): string {
    return execFileSync('git', ['-c', 'user.name=Hangar Test', '-c', 'user.email=test@hangar.invalid', ...args], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  }

  /** Creates owner/repo with `files` in its first commit on `main`; returns the commit. */
  createRepo(owner: string, repo: string, files: Record<string, string>): string {
    const bare = path.join(this.root, owner, repo);
    fs.mkdirSync(bare, { recursive: true });
    this.git(bare, ['init', '--bare', '--quiet', '--initial-branch=main']);
    const work = this.workTree(owner, repo);
    fs.mkdirSync(work, { recursive: true });
    this.git(work, ['init', '--quiet', '--initial-branch=main']);
    this.git(work, ['remote', 'add', 'origin', bare]);
    return this.commit(owner, repo, files, 'first commit');
  }

  /** Writes (or, with null, deletes) files, commits and pushes to the bare repository; returns the commit. */
  commit(owner: string, repo: string, files: Record<string, string | null>, message = 'change'): string {
    const work = this.workTree(owner, repo);
    for (const [file, content] of Object.entries(files)) {
      const target = path.join(work, file);
      if (content === null) {
        fs.rmSync(target, { force: true });
      } else {
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, content);
      }
    }
    this.git(work, ['add', '--all']);
    this.git(work, ['commit', '--quiet', '--allow-empty', '-m', message]);
    this.git(work, ['push', '--quiet', 'origin', 'HEAD:main']);
    return this.git(work, ['rev-parse', 'HEAD']);
  }

  private workTree(owner: string, repo: string): string {
    return path.join(this.root, '.work', owner, repo);
  }

  remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** A well-formed SKILL.md. */
export function skillFile(name: string, description: string, body = `Do ${name}.`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
}
