import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { EnvironmentConfig, RepoRef } from '../../environments/index.js';
import { GitObjectCache } from '../../platform/git/object-cache.js';
import type { RunFile } from '../engine/store.js';
import type { SandboxCapabilities, SandboxMode } from '../sandbox/backend.js';
import { type CloneAccess, Repositories } from './clone.js';
import { type FileOwner, removeTree, WorkspaceFiles } from './files.js';
import { workspaceName } from './home.js';
import { LAYERS_DIRECTORY, WorkspaceLayers } from './layers.js';
import { CLONES_DIRECTORY, removeOrphanClones } from './linked-clone.js';
import type { Report, SetupResult, WorkspaceOptions } from './options.js';
import { bundleChanges, cleanOwnersGitConfig } from './own-commands.js';
import { runSetupCommands } from './setup-commands.js';

// The module the rest of execution/ uses: what its parts (one job each) offer comes with it.
export type { CloneAccess } from './clone.js';
export { sandboxHiddenPaths } from './hidden-paths.js';
export { HOME_DIRECTORY, workspaceHome, workspaceName } from './home.js';
export type { SetupResult, WorkspaceOptions } from './options.js';

/** Per-execution directories: created, prepared from an environment (clones, setup commands), removed. */
export class Workspaces {
  /** Workspaces mounted over a setup snapshot (warm starts): unmounted when they are removed. */
  readonly layers: WorkspaceLayers;

  /** The mirrors fetched and the clones made from them. */
  private readonly repositories: Repositories;

  constructor(private readonly options: WorkspaceOptions) {
    requireHostDirectory(options.sandbox.capabilities);
    this.layers = new WorkspaceLayers(options.root, options.owner);
    this.repositories = new Repositories(options);
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
   * sandbox without network (own-commands.ts).
   */
  bundleChanges(directory: string, repo: string, message: string, maxBytes: number): Promise<Buffer> {
    return bundleChanges(this.options, directory, repo, message, maxBytes);
  }

  /**
   * In a run of a team that does not own its environment, between setup and the agent: removes what setup left in
   * git's configuration that runs commands (own-commands.ts).
   */
  cleanOwnersGitConfig(
    directory: string,
    repos: string[],
  ): Promise<{ ok: true; home: string } | { ok: false; message: string }> {
    return cleanOwnersGitConfig(this.options, directory, repos);
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
  repoUrl(ref: RepoRef): string {
    return this.repositories.repoUrl(ref);
  }

  /** Brings the mirror of each repository up to date (clone.ts): the commit of each one's default branch. */
  fetchRepos(
    repos: RepoRef[],
    report: Report,
  ): Promise<{ ok: true; commits: Record<string, string> } | { ok: false; message: string }> {
    return this.repositories.fetchRepos(repos, report);
  }

  /**
   * Clones the environment's repositories and runs its setup commands in order, each under the time limit.
   * `report` receives a timeline entry per step; `abort` stops the step in progress (a cancel).
   */
  async setUp(
    directory: string,
    environment: EnvironmentConfig,
    report: Report,
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

  /** Clones each repository from its mirror, or with `access`'s token from its URL, into the workspace (clone.ts). */
  clone(
    directory: string,
    repos: RepoRef[],
    report: Report,
    abort: AbortSignal,
    access?: CloneAccess,
  ): Promise<SetupResult> {
    return this.repositories.clone(directory, repos, report, abort, access);
  }

  /** Runs setup commands in order in the sandbox, each under the time limit; the first that fails ends setup. */
  runSetupCommands(
    directory: string,
    commands: readonly string[],
    report: Report,
    abort: AbortSignal,
  ): Promise<SetupResult> {
    return runSetupCommands(this.options, directory, commands, report, abort);
  }
}

/**
 * The port says where a workspace is and how files reach it (capabilities.workspaceFiles); everything here (the
 * directories, WorkspaceFiles' handles, overlay layers, linked clones, snapshot copies) is written for a directory on
 * this server's own file system that the sandbox binds. A backend that declares another way is refused here, once at
 * start, rather than given a directory it never sees; a new way fails to compile until this says what it does.
 */
function requireHostDirectory(capabilities: SandboxCapabilities): void {
  const way = capabilities.workspaceFiles;
  switch (way) {
    case 'host-directory':
      return;
    default: {
      const unknown: never = way;
      throw new Error(`a workspace whose files reach it by ${String(unknown)} is not one Workspaces can prepare`);
    }
  }
}
