import { type RepoRef, repoKey } from '../../environments/index.js';
import { gitReason } from '../../platform/git/object-cache.js';
import { execFileAsync } from '../../platform/spawn/index.js';
import { endSpan, startSpan } from '../../platform/tracing.js';
import { failureReason, tailOf } from '../run/output-tail.js';
import { scrubbedEnvironment } from '../sandbox/index.js';
import { cloneGitConfig } from './git-config.js';
import { workspaceHome } from './home.js';
import { cloneLinked } from './linked-clone.js';
import type { Report, SetupResult, WorkspaceOptions } from './options.js';

/** How the clones authenticate: a token per repository (`owner/repo`, lower case), and a branch to prefer. */
export interface CloneAccess {
  tokens: Map<string, string>;
  /** Checked out instead of the default branch when the repository has it (a follow-up continues its branch). */
  branch?: string;
}

/**
 * git's credential helper for the server's clones: it answers with the token from the clone's own environment
 * (HANGAR_GIT_PASSWORD), so the token is never in a command line, a URL or the clone's configuration.
 */
export const ENVIRONMENT_CREDENTIAL_HELPER =
  '!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$HANGAR_GIT_PASSWORD"; }; f';

/** A workspace root's repositories: their mirrors brought up to date, and the clones made from them in a workspace. */
export class Repositories {
  constructor(private readonly options: WorkspaceOptions) {}

  /** The URL of a repository under the operator's base URL (it may carry credentials: never shown). */
  repoUrl({ owner, repo }: RepoRef): string {
    return `${this.options.gitBaseUrl}/${owner}/${repo}`;
  }

  /**
   * Brings the mirror of each repository up to date (one fetch per repository however many executions ask at
   * once): the commit of each one's default branch, keyed by `owner/repo` as the environment spells it.
   */
  async fetchRepos(
    repos: RepoRef[],
    report: Report,
  ): Promise<{ ok: true; commits: Record<string, string> } | { ok: false; message: string }> {
    const commits: Record<string, string> = {};
    for (const ref of repos) {
      const name = `${ref.owner}/${ref.repo}`;
      try {
        commits[name] = (await this.options.gitCache.update(repoKey(ref), this.repoUrl(ref))).head;
      } catch (error) {
        const reason = (error as Error).message.replace(/^could not fetch [^:]*: /, '');
        await report('environment_setup_step_failed', { repo: name, output_tail: reason });
        return { ok: false, message: `Environment setup failed: cloning ${name} failed: ${reason}`.trim() };
      }
    }
    return { ok: true, commits };
  }

  /**
   * Whether clones hard-link the mirror's object files (cloneLinked): only a root server whose runs run as another
   * user, who can then never change a linked file. A server whose runs share its uid could chmod one: its clones
   * copy the mirror's packs instead (`--no-hardlinks`).
   */
  private get linksMirror(): boolean {
    const owner = this.options.owner;
    return owner !== undefined && owner.uid !== 0 && process.getuid?.() === 0;
  }

  /**
   * Clones each repository from its mirror (fetched by fetchRepos) into the workspace. The clone borrows nothing
   * (no alternates): nothing done in the checkout can reach the mirror. A root server clones with hard links to the
   * mirror's object files, which stay root's and read-only, and checks the clone out as the run user (cloneLinked);
   * otherwise the run user clones, copying the mirror's packs. Its `origin` is then the repository's URL, as if
   * cloned from there. A repository `access` holds a GitHub token for is cloned from its URL with that token instead
   * (and on a follow-up, its run's branch).
   */
  async clone(
    directory: string,
    repos: RepoRef[],
    report: Report,
    abort: AbortSignal,
    access?: CloneAccess,
  ): Promise<SetupResult> {
    const home = await workspaceHome(directory, this.options.owner);
    const user = this.options.owner;
    const cache = this.options.gitCache;
    const gitOptions = {
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      timeout: this.options.setupTimeoutMs,
      signal: abort,
      env: {
        ...scrubbedEnvironment(
          { GIT_TERMINAL_PROMPT: '0', ...(user ? { GIT_CONFIG_GLOBAL: cloneGitConfig() } : {}) },
          home,
        ),
      },
      maxBuffer: 1024 * 1024,
    };
    for (const ref of repos) {
      const { owner, repo } = ref;
      if (abort.aborted) return { ok: false, message: 'cancelled' };
      const started = Date.now();
      // The repository's name, never its URL (the base URL may carry credentials).
      const span = startSpan('clone', { attributes: { 'hangar.repo': `${owner}/${repo}` } });
      try {
        const token = access?.tokens.get(`${owner}/${repo}`.toLowerCase());
        // As the run user, so the checkout is the run's to change; from inside the workspace (the directories above
        // it are only traversable), into a name relative to it.
        if (token) {
          // A repository reached with the execution's own GitHub token is cloned from GitHub, never through the
          // shared mirror: the mirror serves every team, and this repository is only this run's to read.
          const clone = (branch: string | undefined) =>
            execFileAsync(
              'git',
              [
                // Top-level -c: the helper serves this command only, it is not written into the clone's config.
                ...['-c', 'credential.helper=', '-c', `credential.helper=${ENVIRONMENT_CREDENTIAL_HELPER}`],
                ...['clone', '--quiet', ...(branch ? ['--branch', branch] : []), '--', this.repoUrl(ref), repo],
              ],
              { cwd: directory, ...gitOptions, env: { ...gitOptions.env, HANGAR_GIT_PASSWORD: token } },
            );
          if (access?.branch) {
            // A follow-up continues on the branch its run pushed; the first execution finds none and takes the default.
            await clone(access.branch).catch(async (error: unknown) => {
              if (!/Remote branch .* not found/i.test(String((error as { stderr?: string }).stderr))) throw error;
              await clone(undefined);
            });
          } else {
            await clone(undefined);
          }
        } else if (this.linksMirror && user) {
          await cache.reading(repoKey(ref), () =>
            cloneLinked(cache.mirrorPath(repoKey(ref)), directory, repo, this.repoUrl(ref), {
              root: this.options.root,
              owner: user,
              timeoutMs: this.options.setupTimeoutMs,
              signal: abort,
            }),
          );
          // The checkout, as the run user: the repository's files and links are written by the run's uid only. What
          // a clone's own checkout does (the index and the files from HEAD's tree), unlike `reset --hard`, which
          // would leave an ORIG_HEAD and a reflog entry a clone by hand has not.
          await execFileAsync('git', ['-C', repo, 'read-tree', '--reset', '-u', 'HEAD'], {
            cwd: directory,
            ...gitOptions,
          });
        } else {
          // The checkout is fresh: nothing of the run has touched it yet when its origin is set.
          await cache.reading(repoKey(ref), async () => {
            await execFileAsync(
              'git',
              ['clone', '--quiet', '--no-hardlinks', '--', cache.mirrorPath(repoKey(ref)), repo],
              { cwd: directory, ...gitOptions },
            );
          });
          await execFileAsync('git', ['-C', repo, 'remote', 'set-url', 'origin', this.repoUrl(ref)], {
            cwd: directory,
            ...gitOptions,
          });
        }
        endSpan(span);
        await report('environment_repo_cloned', { repo: `${owner}/${repo}`, duration_ms: Date.now() - started });
      } catch (error) {
        endSpan(span, new Error('the clone failed'));
        const stderr = gitReason(error, this.repoUrl(ref), `${owner}/${repo}`);
        const lines = tailOf(stderr).lines();
        await report('environment_setup_step_failed', {
          repo: `${owner}/${repo}`,
          output_tail: lines.join('\n'),
        });
        return {
          ok: false,
          message: `Environment setup failed: cloning ${owner}/${repo} failed: ${failureReason(lines) ?? ''}`.trim(),
        };
      }
    }
    return { ok: true };
  }
}
