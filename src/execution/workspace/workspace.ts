import { execFileAsync } from '../../platform/spawn/index.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { EnvironmentConfig } from '../../environments/index.js';
import { endSpan, startSpan } from '../../platform/tracing.js';
import { repoKey, type RepoRef } from '../../environments/index.js';
import { GitObjectCache, gitReason } from '../../platform/git/object-cache.js';
import { cloneGitConfig, GUEST_GIT_CLEANUP, guestGitEnvironment } from './git-config.js';
import { scrubbedEnvironment, spawnSandboxed } from '../sandbox/index.js';
import { OWN_WORKSPACE_BASE } from '../sandbox/workspace-root.js';
import type { SandboxMode, SandboxedProcess } from '../sandbox/backend.js';
import type { RunFile } from '../engine/store.js';
import { removeTree, WorkspaceFiles, type FileOwner } from './files.js';
import { LAYERS_DIRECTORY, WorkspaceLayers } from './layers.js';
import { CLONES_DIRECTORY, cloneLinked, removeOrphanClones } from './linked-clone.js';
import { failureReason, OutputTail, tailOf } from '../run/output-tail.js';

export interface WorkspaceOptions {
  /** Workspaces live under here, one directory per execution. */
  root: string;
  gitBaseUrl: string;
  sandbox: SandboxMode;
  /** Hidden from sandboxed processes (the data directory: database files, keys). */
  hiddenPaths: string[];
  setupTimeoutMs: number;
  setupNetwork: boolean;
  maxOutputBytes: number;
  /** Who the run's processes run as: what the server creates in a workspace is theirs (unset: the server's user). */
  owner?: FileOwner;
  /** The mirrors repositories are cloned from (in the server's data directory). */
  gitCache: GitObjectCache;
}

export type SetupResult = { ok: true } | { ok: false; message: string };

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

/** The HOME of an execution's processes, relative to its workspace. */
export const HOME_DIRECTORY = '.home';

/**
 * The HOME of an execution's processes, inside its workspace; made when the first process needs it. A setup
 * command may have put a link (or a file) there: that is refused, the server never writes through it.
 */
export async function workspaceHome(directory: string, owner?: FileOwner): Promise<string> {
  const home = path.join(directory, HOME_DIRECTORY);
  try {
    // One system call in the usual case. By path, safely: the workspace's own path is the server's, and mkdir never
    // follows a link in the last component (it fails with EEXIST).
    await fs.promises.mkdir(home, { mode: 0o700 });
    // lchown: were it swapped for a link meanwhile, the link would be changed, not what it points at.
    if (owner) await fs.promises.lchown(home, owner.uid, owner.gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Already there (made before the setup commands): it must still be a directory, not a link they put there.
    await WorkspaceFiles.with(directory, owner, (files) => files.mkdirs(HOME_DIRECTORY));
  }
  return home;
}

/** The directory of one execution under the workspace root: the name says whose it is, for any replica to judge. */
export function workspaceName(runId: string, executionId: number): string {
  return `${runId}.${executionId}`;
}

/**
 * What sandboxed processes must not see: the data directory (database files, keys), every execution's workspace
 * but their own (bwrap binds that one back in) and the setup snapshots, wherever they are. Hangar's own directory for
 * relocated workspaces is hidden whole: it holds every data directory's on this machine.
 */
export function sandboxHiddenPaths(config: Pick<Config, 'dataDir' | 'workspaceDir' | 'snapshotDir'>): string[] {
  const inside = (outer: string, inner: string) => !path.relative(outer, inner).startsWith('..');
  const candidates = [config.dataDir, config.workspaceDir, config.snapshotDir].map((directory) =>
    inside(OWN_WORKSPACE_BASE, directory) ? OWN_WORKSPACE_BASE : directory,
  );
  return candidates.filter(
    (directory, index) =>
      !candidates.some((other, at) => at < index && inside(other, directory)) &&
      !candidates.some((other, at) => at > index && other !== directory && inside(other, directory)),
  );
}

/** Per-execution directories: created, prepared from an environment (clones, setup commands), removed. */
export class Workspaces {
  /** Workspaces mounted over a setup snapshot (warm starts): unmounted when they are removed. */
  readonly layers: WorkspaceLayers;

  constructor(private readonly options: WorkspaceOptions) {
    this.layers = new WorkspaceLayers(options.root, options.owner);
  }

  /** Who owns what the server creates in a workspace (unset: the server's own user). */
  get owner(): FileOwner | undefined {
    return this.options.owner;
  }

  /** Workspaces under the configured workspace directory (`<data dir>/workspaces` by default). */
  static fromConfig(config: Config, sandbox: SandboxMode, hiddenPaths: string[]): Workspaces {
    return new Workspaces({
      root: config.workspaceDir,
      gitBaseUrl: config.gitBaseUrl,
      sandbox,
      hiddenPaths,
      setupTimeoutMs: config.setupTimeoutMinutes * 60_000,
      setupNetwork: config.setupNetwork,
      maxOutputBytes: config.maxOutputBytes,
      owner: config.runUser,
      gitCache: GitObjectCache.shared(path.join(config.dataDir, 'git-cache'), config.gitCacheMaxBytes),
    });
  }

  /**
   * A fresh directory for one execution. One system call in the usual case: file system calls are slow on small
   * VMs (about 0.25 ms each, measured), and every run pays them on its way to the agent.
   */
  async create(runId: string, executionId: number): Promise<string> {
    const directory = path.join(this.options.root, workspaceName(runId, executionId));
    try {
      await fs.promises.mkdir(directory, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The root is made on first use; a leftover of the same execution (its engine died) is replaced.
      if (code !== 'ENOENT' && code !== 'EEXIST') throw error;
      if (code === 'EEXIST') {
        await this.layers.unmount(directory);
        await removeTree(directory);
      }
      await fs.promises.mkdir(directory, { recursive: true, mode: 0o700 });
    }
    // The run's user must be able to work in it; the path is the server's (the run controls only what is inside).
    if (this.options.owner) await fs.promises.chown(directory, this.options.owner.uid, this.options.owner.gid);
    return directory;
  }

  /** Writes the run's files at the top of its workspace, where the prompt says they are. */
  async addFiles(directory: string, files: RunFile[]): Promise<void> {
    await WorkspaceFiles.with(directory, this.options.owner, async (workspace) => {
      for (const [index, file] of files.entries()) {
        // A name is only ever a name here: no directories, nothing hidden, nothing that escapes the workspace.
        const name = path.basename(file.file_name).replace(/^\.+/, '') || `attachment-${index + 1}`;
        await workspace.writeFile(name, file.data);
      }
    });
  }

  /** Where repositories are cloned from (HANGAR_GIT_BASE_URL). */
  get gitBaseUrl(): string {
    return this.options.gitBaseUrl;
  }

  /**
   * Commits what is uncommitted in the workspace's `repo` with `message` and bundles its HEAD, inside the run's
   * sandbox without network: the repository's configuration and hooks are the run's, so they run only where the
   * run's own code runs, never in the server. The server then reads the bundle (plain data, no link followed).
   */
  async bundleChanges(directory: string, repo: string, message: string, maxBytes: number): Promise<Buffer> {
    const home = await workspaceHome(directory, this.options.owner);
    const bundle = `.hangar-publish-${repo}.bundle`;
    const script = [
      'cd -- "$1" || exit 1',
      'git add --all || exit 1',
      'git diff --cached --quiet || git -c user.name=Hangar -c user.email=hangar@users.noreply.github.com commit --quiet --no-verify -m "$2" || exit 1',
      'rm -f -- "../$3"',
      'git bundle create "../$3" HEAD 2>&1 || exit 1',
    ].join('\n');
    const exit = await this.runOffline(
      directory,
      ['sh', '-c', script, 'sh', repo, message, bundle],
      scrubbedEnvironment({ GIT_TERMINAL_PROMPT: '0' }, home),
    );
    if (exit.code !== 0)
      throw new Error(`committing the changes of ${repo} failed: ${failureReason(exit.output) ?? `exit ${exit.code}`}`);
    try {
      return await WorkspaceFiles.with(directory, this.options.owner, (files) => files.readFile(bundle, { maxBytes }));
    } finally {
      // A name at the top of the server's own directory: unlink removes whatever is there, link or not, following none.
      await fs.promises.unlink(path.join(directory, bundle)).catch(() => undefined);
    }
  }

  /**
   * In a run of a team that does not own its environment, between setup and the agent: removes what setup left in
   * git's configuration that runs commands (GUEST_GIT_CLEANUP, in the run's sandbox without network, so nothing is
   * read or followed by the server). `repos` are the clones' directories. The agent's git then runs with
   * guestGitEnvironment(..., home).
   */
  async cleanOwnersGitConfig(
    directory: string,
    repos: string[],
  ): Promise<{ ok: true; home: string } | { ok: false; message: string }> {
    const home = await workspaceHome(directory, this.options.owner);
    const exit = await this.runOffline(
      directory,
      ['sh', '-c', GUEST_GIT_CLEANUP, 'sh', ...repos],
      scrubbedEnvironment(guestGitEnvironment({ GIT_TERMINAL_PROMPT: '0' }, home), home),
    );
    if (exit.code === 0) return { ok: true, home };
    return {
      ok: false,
      message: `Hangar could not clear the git settings the environment's setup left (${failureReason(exit.output) ?? `exit ${exit.code}`}): the run of a team that does not own the environment does not start with them`,
    };
  }

  /** Runs a command of Hangar's own in the workspace's sandbox, without network, within setup's limits. */
  private async runOffline(
    directory: string,
    argv: string[],
    env: Record<string, string>,
  ): Promise<{ code: number | null; output: string[] }> {
    const output = new OutputTail();
    const child = spawnSandboxed({
      mode: this.options.sandbox,
      argv,
      cwd: directory,
      env,
      hiddenPaths: this.options.hiddenPaths,
      allowNetwork: false,
      timeoutMs: this.options.setupTimeoutMs,
      maxOutputBytes: this.options.maxOutputBytes,
      keepStdinOpen: false,
    });
    child.onStdoutLine((line) => output.push(line));
    child.onStderrLine((line) => output.push(line));
    const exit = await child.exited;
    return { code: exit.code, output: output.lines() };
  }

  /** Whether setup commands get network (HANGAR_SETUP_NETWORK). */
  get setupNetwork(): boolean {
    return this.options.setupNetwork;
  }

  async remove(directory: string): Promise<void> {
    // The execution's sandbox (a container) goes first: nothing may still write in the workspace while it goes.
    // An engine that does not answer leaves it to the sweeps (by its label); the workspace still goes.
    await this.options.sandbox.close(directory).catch(() => undefined);
    // Then its overlay, if it started from a snapshot: what is removed below is the execution's own, never the snapshot.
    await this.layers.unmount(directory);
    // A harness that left nothing behind: one rmdir instead of a walk. Otherwise a walk that follows nothing.
    const removedEmpty = await fs.promises.rmdir(directory).then(
      () => true,
      () => false,
    );
    if (!removedEmpty) await removeTree(directory);
  }

  /**
   * Removes the workspaces that no execution uses any more, on any replica sharing this root: `inUse` says which
   * executions may still be running (the database knows, see workspacesInUse), and `keep` names this engine's own.
   * Only the directories listed before asking are judged, so one made meanwhile (by a claim the answer may not
   * show) is left for the next sweep. Names that are not an execution's are not ours to judge.
   */
  async sweep(
    inUse: (executions: Array<{ runId: string; executionId: number }>) => Promise<Set<string>>,
    keep: Set<string>,
  ): Promise<number> {
    // Containers of executions whose workspace is already gone are judged too (their engine died in between).
    const containers = await this.options.sandbox.removeUnused(keep, inUse).catch(() => 0);
    const entries = await fs.promises.readdir(this.options.root).catch(() => [] as string[]);
    const executions = entries.flatMap((name) => {
      const match = /^(.+)\.(\d{1,9})$/.exec(name);
      return match && !keep.has(name) ? [{ name, runId: match[1]!, executionId: Number(match[2]) }] : [];
    });
    if (executions.length === 0) return containers;
    const used = await inUse(executions);
    let removed = containers;
    for (const { name } of executions) {
      if (used.has(name)) continue;
      // Another replica may be removing it at the same time: whoever comes second finds less or nothing.
      await this.remove(path.join(this.options.root, name)).then(
        () => removed++,
        () => undefined,
      );
    }
    await this.layers.removeOrphans();
    await removeOrphanClones(this.options.root);
    return removed;
  }

  /** Removes what dead engines left behind in this data directory, except the directories still in use. */
  async removeAllExcept(keep: Set<string>): Promise<void> {
    await this.options.sandbox
      .removeUnused(new Set([...keep].map((directory) => path.basename(directory))))
      .catch(() => undefined);
    const entries = await fs.promises.readdir(this.options.root).catch(() => [] as string[]);
    for (const entry of entries) {
      const full = path.join(this.options.root, entry);
      // The writable layers go with their workspaces (below, those of the directories kept stay), and so do the
      // clones staged for them.
      if (!keep.has(full) && entry !== LAYERS_DIRECTORY && entry !== CLONES_DIRECTORY) await this.remove(full);
    }
    await this.layers.removeOrphans();
    await removeOrphanClones(this.options.root);
  }

  /** The server's git object cache this workspace root clones from. */
  get gitCache(): GitObjectCache {
    return this.options.gitCache;
  }

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
    report: (type: string, payload: Record<string, unknown>) => Promise<void>,
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
   * Clones the environment's repositories and runs its setup commands in order, each under the time limit.
   * `report` receives a timeline entry per step; `abort` stops the step in progress (a cancel).
   */
  async setUp(
    directory: string,
    environment: EnvironmentConfig,
    report: (type: string, payload: Record<string, unknown>) => Promise<void>,
    abort: AbortSignal,
    access?: CloneAccess,
  ): Promise<SetupResult> {
    const mirrored = environment.github_repos.filter(
      (ref) => !access?.tokens.has(`${ref.owner}/${ref.repo}`.toLowerCase()),
    );
    const fetched = await this.fetchRepos(mirrored, report);
    if (!fetched.ok) return fetched;
    const cloned = await this.clone(directory, environment.github_repos, report, abort, access);
    if (!cloned.ok) return cloned;
    return this.runSetupCommands(directory, environment.setup_commands, report, abort);
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
    report: (type: string, payload: Record<string, unknown>) => Promise<void>,
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

  /** Runs setup commands in order in the sandbox, each under the time limit; the first that fails ends setup. */
  async runSetupCommands(
    directory: string,
    commands: readonly string[],
    report: (type: string, payload: Record<string, unknown>) => Promise<void>,
    abort: AbortSignal,
  ): Promise<SetupResult> {
    const home = await workspaceHome(directory, this.options.owner);
    for (const [index, command] of commands.entries()) {
      if (abort.aborted) return { ok: false, message: 'cancelled' };
      const started = Date.now();
      // Its position, not its text: a command line may hold what its author would not want in a trace.
      const span = startSpan('setup command', { attributes: { 'hangar.setup.index': index } });
      const output = new OutputTail();
      const child: SandboxedProcess = spawnSandboxed({
        mode: this.options.sandbox,
        argv: ['sh', '-c', command],
        cwd: directory,
        env: scrubbedEnvironment({}, home),
        hiddenPaths: this.options.hiddenPaths,
        allowNetwork: this.options.setupNetwork,
        timeoutMs: this.options.setupTimeoutMs,
        maxOutputBytes: this.options.maxOutputBytes,
        keepStdinOpen: false,
      });
      const keep = (line: string) => output.push(line);
      child.onStdoutLine(keep);
      child.onStderrLine(keep);
      const onAbort = () => void child.kill();
      abort.addEventListener('abort', onAbort, { once: true });
      const exit = await child.exited;
      abort.removeEventListener('abort', onAbort);
      span?.setAttribute('process.exit.code', exit.code ?? -1);
      endSpan(span, exit.code === 0 ? undefined : new Error(exit.timedOut ? 'timed out' : 'exited with an error'));
      if (exit.killed || abort.aborted) return { ok: false, message: 'cancelled' };
      const payload = {
        command,
        exit_code: exit.code,
        duration_ms: Date.now() - started,
        output_tail: output.lines().join('\n'),
      };
      if (exit.code === 0) {
        await report('environment_setup_command', payload);
        continue;
      }
      await report('environment_setup_step_failed', { ...payload, timed_out: exit.timedOut });
      const why = exit.limitExceeded
        ? exit.limitExceeded
        : exit.timedOut
          ? `timed out after ${Math.round(this.options.setupTimeoutMs / 60000)} minutes`
          : exit.code === null
            ? `was killed by ${exit.signal}`
            : `exited with code ${exit.code}`;
      const reason = exit.limitExceeded ? undefined : failureReason(output.lines());
      return {
        ok: false,
        message: `Environment setup failed: setup command \`${command}\` ${why}${reason ? `: ${reason.slice(0, 500)}` : ''}`,
      };
    }
    return { ok: true };
  }
}
