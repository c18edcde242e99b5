import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type {
  EnvironmentConfig,
  EnvironmentSnapshots,
  SnapshotRecord,
  SnapshotScope,
} from '../../environments/index.js';
import { repoKey } from '../../environments/index.js';
import type { Workspaces, SetupResult } from '../workspace.js';
import { WorkspaceFiles } from '../workspace-files.js';
import { snapshotKeys, touchesLockfile, type SnapshotKeys } from './key.js';
import type { SnapshotFiles } from './snapshot-files.js';

/** How an execution's environment was prepared: from nothing, from a matching snapshot, or from an older one. */
export type StartPath = 'cold' | 'warm' | 'updated';

export interface PreparedEnvironment {
  result: SetupResult;
  path: StartPath;
  /** Milliseconds per step: fetch (the mirrors), clone, restore, update, setup, snapshot. */
  steps: Record<string, number>;
  /** The start of the snapshot key it started from or made. */
  snapshotKey?: string;
}

type Report = (type: string, payload: Record<string, unknown>) => Promise<void>;

export interface PrepareRequest {
  workspace: string;
  runId: string;
  executionId: number;
  environmentUid: string;
  teamUid: string;
  environment: EnvironmentConfig;
  /** False when the workspace holds what only this run may see (its attachments): it is then never snapshotted. */
  mayTakeSnapshot: boolean;
  report: Report;
  abort: AbortSignal;
}

const REPOSITORY_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Prepares an execution's environment the fastest safe way (issue 28). The repositories' mirrors are fetched first
 * (their commits are part of the key), then:
 * - **warm**: a ready snapshot with the same key (image, commits, setup commands, variables) for this environment and
 *   this team: copied into the workspace, no setup runs;
 * - **updated**: the newest snapshot with the same key but other commits: copied, each repository that moved is
 *   brought to its new commit inside the sandbox (from a bundle the server writes into the workspace, so nothing in
 *   the sandbox reaches the mirror), and setup runs again per the environment's `setup_on_update`;
 * - **cold**: clone and setup, as without snapshots.
 * A successful cold or updated start is snapshotted before the agent starts (a failed setup never is), once per key
 * however many executions finish it at once.
 */
export class WarmStarts {
  /** Snapshots this process is making now, by scope and key: a second execution leaves it to the first. */
  private readonly making = new Set<string>();

  constructor(
    private readonly options: {
      snapshots: EnvironmentSnapshots;
      files: SnapshotFiles;
      workspaces: Workspaces;
      sandbox: string;
      setupNetwork: boolean;
      maxBytes: number;
      warn: (error: unknown, message: string) => void;
    },
  ) {}

  async prepare(request: PrepareRequest): Promise<PreparedEnvironment> {
    const { workspaces, snapshots, files } = this.options;
    const { environment, report, abort } = request;
    const steps: Record<string, number> = {};
    const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        steps[`${step}_ms`] = Math.round((steps[`${step}_ms`] ?? 0) + performance.now() - started);
      }
    };
    const fetched = await timed('fetch', () => workspaces.fetchRepos(environment.github_repos, report));
    if (!fetched.ok) return { result: fetched, path: 'cold', steps };
    const keys = snapshotKeys({
      // The host's tools under bwrap; the environment's image is named all the same, so changing it starts cold.
      image: `host:${environment.docker_image ?? ''}`,
      sandbox: this.options.sandbox,
      commits: fetched.commits,
      setupCommands: environment.setup_commands,
      setupNetwork: this.options.setupNetwork,
      variables: {},
    });
    const scope: SnapshotScope = { environmentUid: request.environmentUid, teamUid: request.teamUid };
    const exact = snapshots.enabled ? await snapshots.exact(scope, keys.key) : undefined;
    if (exact && (await files.has(exact.id))) {
      const restored = await timed('restore', () => this.restore(exact, request));
      if (restored) return { result: { ok: true }, path: 'warm', steps, snapshotKey: short(keys.key) };
    }
    const older = snapshots.enabled && !exact ? await snapshots.newest(scope, keys.baseKey) : undefined;
    if (older && (await files.has(older.id)) && (await timed('restore', () => this.restore(older, request)))) {
      const updated = await this.update(older, fetched.commits, request, timed);
      if (updated === 'failed') {
        // What the snapshot held could not be brought up to date: from nothing instead, in a clean workspace.
        await this.options.workspaces.create(request.runId, request.executionId);
      } else {
        if (updated.ok) await timed('snapshot', () => this.take(scope, keys, fetched.commits, request));
        return { result: updated, path: 'updated', steps, snapshotKey: short(keys.key) };
      }
    }
    const cloned = await timed('clone', () =>
      workspaces.clone(request.workspace, environment.github_repos, report, abort),
    );
    if (!cloned.ok) return { result: cloned, path: 'cold', steps };
    const setup = await timed('setup', () =>
      workspaces.runSetupCommands(request.workspace, environment.setup_commands, report, abort),
    );
    if (setup.ok && snapshots.enabled) await timed('snapshot', () => this.take(scope, keys, fetched.commits, request));
    return { result: setup, path: 'cold', steps, ...(snapshots.enabled ? { snapshotKey: short(keys.key) } : {}) };
  }

  /** Copies a snapshot into the (empty) workspace; false when it could not be (the workspace is emptied again). */
  private async restore(snapshot: SnapshotRecord, request: PrepareRequest): Promise<boolean> {
    try {
      await this.options.files.restore(snapshot.id, request.workspace);
      return true;
    } catch (error) {
      this.options.warn(error, 'could not restore a setup snapshot; setting up from nothing');
      await this.options.workspaces.create(request.runId, request.executionId);
      return false;
    }
  }

  /** Brings a restored snapshot's repositories to their new commits, then runs setup when the environment says so. */
  private async update(
    snapshot: SnapshotRecord,
    commits: Record<string, string>,
    request: PrepareRequest,
    timed: <T>(step: string, work: () => Promise<T>) => Promise<T>,
  ): Promise<SetupResult | 'failed'> {
    const { workspaces } = this.options;
    const cache = workspaces.gitCache;
    const { environment, report, abort } = request;
    let lockfileChanged = false;
    for (const ref of environment.github_repos) {
      const name = `${ref.owner}/${ref.repo}`;
      const from = snapshot.commits[name];
      const to = commits[name];
      if (!from || !to || !REPOSITORY_NAME.test(ref.repo)) return 'failed';
      if (from === to) continue;
      const moved = await timed('update', async () => {
        const changed = await cache.changedPaths(repoKey(ref), from, to).catch(() => ['package-lock.json']);
        lockfileChanged ||= touchesLockfile(changed);
        const bundleName = `.hangar-update-${randomBytes(6).toString('hex')}.bundle`;
        const aside = path.join(cache.directory, '.bundles');
        await fs.promises.mkdir(aside, { recursive: true });
        const file = path.join(aside, bundleName);
        try {
          const bundled = await cache.reading(repoKey(ref), () => cache.bundle(repoKey(ref), from, to, file));
          const data = await fs.promises.readFile(file);
          // Written by the server without following anything the snapshot holds (the name is new and its own).
          await WorkspaceFiles.with(request.workspace, workspaces.owner, (files) => files.writeFile(bundleName, data));
          // Inside the sandbox, like setup: git reads the repository's own configuration, which setup may have
          // changed, so it never runs outside it. The upstream branch follows, as a fetch would have moved it.
          const script =
            `cd -- '${ref.repo}' && git fetch --quiet --no-tags '../${bundleName}' '${bundled}' && ` +
            `git reset --quiet --hard FETCH_HEAD && { u=$(git rev-parse --symbolic-full-name '@{u}' 2>/dev/null); ` +
            `[ -z "$u" ] || git update-ref "$u" FETCH_HEAD; }; s=$?; rm -f -- '../${bundleName}'; exit $s`;
          const started = Date.now();
          const result = await workspaces.runSetupCommands(request.workspace, [script], async () => {}, abort);
          if (result.ok) await report('environment_repo_updated', { repo: name, duration_ms: Date.now() - started });
          return result.ok;
        } finally {
          await fs.promises.rm(file, { force: true });
        }
      }).catch((error) => {
        this.options.warn(error, 'could not bring a snapshot repository up to date');
        return false;
      });
      if (!moved) return 'failed';
    }
    const policy = environment.setup_on_update ?? 'when_lockfiles_change';
    const rerun = policy === 'always' || (policy === 'when_lockfiles_change' && lockfileChanged);
    if (!rerun) return { ok: true };
    return timed('setup', () =>
      workspaces.runSetupCommands(request.workspace, environment.setup_commands, report, abort),
    );
  }

  /**
   * Snapshots a workspace just set up, unless another execution (here or on another replica) is making the same
   * one. Then keeps the whole within its TTL and size bound. A failure costs the next run its warm start, nothing
   * more: it is logged, and the run goes on.
   */
  private async take(
    scope: SnapshotScope,
    keys: SnapshotKeys,
    commits: Record<string, string>,
    request: PrepareRequest,
  ): Promise<void> {
    if (!request.mayTakeSnapshot) return;
    const { snapshots, files } = this.options;
    const making = `${scope.environmentUid}/${scope.teamUid}/${keys.key}`;
    if (this.making.has(making)) return;
    this.making.add(making);
    try {
      const id = await snapshots.claim(scope, keys.key, keys.baseKey, commits);
      if (!id) return;
      try {
        const size = await files.take(id, request.workspace);
        await snapshots.ready(id, size);
      } catch (error) {
        await snapshots.remove([id]).catch(() => undefined);
        throw error;
      }
      for (const old of await snapshots.superseded(scope, keys.baseKey, id)) await files.remove(old);
      await this.maintain();
    } catch (error) {
      this.options.warn(error, 'could not take a setup snapshot');
    } finally {
      this.making.delete(making);
    }
  }

  /** Removes expired and least recently used snapshots (past the size bound), and files no record names. */
  async maintain(): Promise<void> {
    const { snapshots, files, maxBytes } = this.options;
    for (const id of await snapshots.expire(maxBytes)) await files.remove(id);
    // Listed before asking: a snapshot whose record is made meanwhile has no files yet, so none is taken wrongly.
    const onDisk = await files.list();
    const known = await snapshots.existing(onDisk);
    for (const id of onDisk) if (!known.has(id)) await files.remove(id);
  }
}

function short(key: string): string {
  return key.slice(0, 16);
}
