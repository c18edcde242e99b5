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
import type { Workspaces, SetupResult } from '../workspace/workspace.js';
import { WorkspaceFiles } from '../workspace/files.js';
import { snapshotKeys, touchesLockfile, type SnapshotKeys } from './key.js';
import type { SnapshotFiles } from './snapshot-files.js';
import type { SandboxImageSnapshots } from '../sandbox/backend.js';

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
  /**
   * The execution's container (container sandbox), opened here once the path is known: from the snapshot's image on
   * a warm or updated start, else from the environment's. `open` is false when it could not be (the outcome set).
   */
  sandbox?: {
    open: (snapshotImage?: string) => Promise<boolean>;
    close: () => Promise<void>;
    /** Freezes and detaches the container, which goes once the next one is open (or at close). */
    retire: () => Promise<void>;
  };
}

const REPOSITORY_NAME = /^[A-Za-z0-9._-]+$/;

/** Updated starts commit a layer each on top of their snapshot's image: past this many, the next one starts cold. */
const MAX_IMAGE_LAYERS = 16;

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
      /** The container sandbox's committed images, which hold what setup left outside the workspace. */
      images?: SandboxImageSnapshots;
      setupNetwork: boolean;
      maxBytes: number;
      warn: (error: unknown, message: string) => void;
    },
  ) {}

  /** How the environment was prepared; null when the execution's container could not be opened (its outcome set). */
  async prepare(request: PrepareRequest): Promise<PreparedEnvironment | null> {
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
    const { images } = this.options;
    const sandbox = request.sandbox;
    const keysFor = (imageId: string | undefined) =>
      snapshotKeys({
        // Under containers, the image by its engine id: a tag moved to another image never reuses a snapshot. The
        // host's tools under bwrap; the environment's image is named all the same, so changing it starts cold.
        image: images
          ? `container:${environment.docker_image ?? ''}@${imageId ?? 'absent'}`
          : `host:${environment.docker_image ?? ''}`,
        sandbox: this.options.sandbox,
        commits: fetched.commits,
        setupCommands: environment.setup_commands,
        setupNetwork: this.options.setupNetwork,
        variables: {},
      });
    const baseImage = images ? await images.imageId(environment.docker_image) : undefined;
    let keys = keysFor(baseImage);
    const scope: SnapshotScope = { environmentUid: request.environmentUid, teamUid: request.teamUid };
    /** Its files here, and under containers its image in the engine. */
    const usable = async (snapshot: SnapshotRecord) =>
      (await files.has(snapshot.id)) && (!images || (await images.has(snapshot.id)));
    const exact = snapshots.enabled ? await snapshots.exact(scope, keys.key) : undefined;
    if (exact && (await usable(exact))) {
      // Mounted, not copied, where the server can: nothing runs in a warm workspace before the agent, whose changes
      // go to the workspace's own layer.
      const restored = await timed('restore', () => this.restore(exact, request, workspaces.layers.available));
      if (restored) {
        if (sandbox && !(await sandbox.open(images!.reference(exact.id)))) return null;
        return { result: { ok: true }, path: 'warm', steps, snapshotKey: short(keys.key) };
      }
    }
    const older = snapshots.enabled && !exact ? await snapshots.newest(scope, keys.baseKey) : undefined;
    // Mounted too where the server can: the next snapshot is then copied from the merged workspace.
    const buildsOn = async (snapshot: SnapshotRecord) =>
      (await usable(snapshot)) && (!images || (await images.layersAbove(snapshot.id, baseImage!)) < MAX_IMAGE_LAYERS);
    if (
      older &&
      (await buildsOn(older)) &&
      (await timed('restore', () => this.restore(older, request, workspaces.layers.available)))
    ) {
      if (sandbox && !(await sandbox.open(images!.reference(older.id)))) return null;
      const updated = await this.update(older, fetched.commits, request, timed);
      if (updated === 'failed') {
        // What the snapshot held could not be brought up to date: from nothing instead, in a clean workspace (and a
        // container of the environment's own image).
        await sandbox?.close();
        await this.options.workspaces.create(request.runId, request.executionId);
      } else {
        if (updated.ok) await timed('snapshot', () => this.take(scope, keys, fetched.commits, request));
        return { result: updated, path: 'updated', steps, snapshotKey: short(keys.key) };
      }
    }
    // The checkout is the host's work and the container's start (and pull) the engine's: they go on at once. Nothing
    // of the run runs in the container before setup, and the workspace it binds is the same directory throughout.
    const [opened, cloned] = await Promise.allSettled([
      sandbox ? sandbox.open() : Promise.resolve(true),
      timed('clone', () => workspaces.clone(request.workspace, environment.github_repos, report, abort)),
    ]);
    if (opened.status === 'rejected') throw opened.reason;
    if (cloned.status === 'rejected') throw cloned.reason;
    if (!opened.value) return null;
    // Pulled by now: the snapshot is made under the image's id.
    if (sandbox) keys = keysFor(await images!.imageId(environment.docker_image));
    if (!cloned.value.ok) return { result: cloned.value, path: 'cold', steps };
    const setup = await timed('setup', () =>
      workspaces.runSetupCommands(request.workspace, environment.setup_commands, report, abort),
    );
    if (setup.ok && snapshots.enabled) {
      const taken = await timed('snapshot', () => this.take(scope, keys, fetched.commits, request, true));
      if (taken === 'no-container') return null;
    }
    return { result: setup, path: 'cold', steps, ...(snapshots.enabled ? { snapshotKey: short(keys.key) } : {}) };
  }

  /**
   * Mounts (`layered`) or copies a snapshot into the (empty) workspace; false when it could not be (the workspace is
   * emptied again). A mount that fails falls back to the copy.
   */
  private async restore(snapshot: SnapshotRecord, request: PrepareRequest, layered: boolean): Promise<boolean> {
    const { files, workspaces } = this.options;
    if (layered) {
      try {
        await workspaces.layers.mount(request.workspace, files.directory(snapshot.id));
        return true;
      } catch (error) {
        this.options.warn(error, 'could not mount a setup snapshot; copying it');
      }
    }
    try {
      await files.restore(snapshot.id, request.workspace);
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
    /** The workspace is a plain directory (a cold start's), which the snapshot can be made of by renaming it. */
    renamable = false,
  ): Promise<'no-container' | undefined> {
    if (!request.mayTakeSnapshot) return;
    const { snapshots, files, images } = this.options;
    const making = `${scope.environmentUid}/${scope.teamUid}/${keys.key}`;
    if (this.making.has(making)) return;
    this.making.add(making);
    /** The execution's container, closed to rename its workspace: opened again from the committed image. */
    let reopenFrom: string | undefined;
    try {
      const id = await snapshots.claim(scope, keys.key, keys.baseKey, commits);
      if (!id) return;
      try {
        const imageSize = images ? await images.commit(request.workspace, id) : 0;
        // Under containers, a cold start's container goes once committed, and the execution goes on in a new one
        // from the committed image, as a warm start's would: a container binds the workspace's directory itself
        // (its bind would follow a rename), so keeping it would mean copying the workspace instead. Frozen before
        // the rename, so that nothing setup left running writes into the workspace once it is the snapshot; removed
        // once the new one is open, off the execution's path.
        if (images && request.sandbox && renamable && this.options.workspaces.layers.available) {
          reopenFrom = images.reference(id);
          await request.sandbox.retire();
        }
        if (await this.adopt(id, request, !images || reopenFrom !== undefined)) {
          // Ready at once; the size of its files (a walk of thousands) is measured by the maintenance that follows.
          this.unmeasured.set(id, imageSize);
          await snapshots.ready(id, imageSize);
        } else {
          await snapshots.ready(id, (await files.take(id, request.workspace)) + imageSize);
        }
      } catch (error) {
        if (error instanceof WorkspaceLost) throw error;
        // The container as setup left it, from the image just committed (its removal below waits for a later
        // maintenance while the container runs from it).
        if (reopenFrom && !(await request.sandbox!.open(reopenFrom))) return 'no-container';
        reopenFrom = undefined;
        await snapshots.remove([id]).catch(() => undefined);
        await this.drop(id).catch(() => undefined);
        throw error;
      }
      const superseded = await snapshots.superseded(scope, keys.baseKey, id);
      // Off the execution's path: removing a snapshot's thousands of files (without following any) takes seconds.
      this.maintainLater(superseded);
    } catch (error) {
      // The execution cannot go on without its workspace.
      if (error instanceof WorkspaceLost) throw error;
      this.options.warn(error, 'could not take a setup snapshot');
    } finally {
      this.making.delete(making);
    }
    if (reopenFrom && !(await request.sandbox!.open(reopenFrom))) return 'no-container';
  }

  /**
   * Takes a snapshot without copying (a root server; under containers once the execution's container is closed): the
   * workspace becomes the snapshot, and the execution goes on in an overlay over it, exactly as a warm start would.
   * False when it cannot (a container still binds the workspace, the workspace is itself an overlay, another file
   * system): the caller copies instead.
   */
  private async adopt(id: string, request: PrepareRequest, unbound: boolean): Promise<boolean> {
    const { files, workspaces } = this.options;
    if (!unbound || !workspaces.layers.available) return false;
    try {
      await files.adopt(id, request.workspace);
    } catch {
      return false;
    }
    try {
      await workspaces.create(request.runId, request.executionId);
      await workspaces.layers.mount(request.workspace, files.directory(id));
    } catch (error) {
      this.options.warn(error, 'could not mount a snapshot just taken; copying it back');
      await workspaces.create(request.runId, request.executionId).catch(() => undefined);
      await files.restore(id, request.workspace).catch((copyError: unknown) => {
        throw new WorkspaceLost(copyError);
      });
    }
    return true;
  }

  /** Snapshots made ready before their files were measured, with the size of their image (0 under bwrap). */
  private readonly unmeasured = new Map<string, number>();

  /** Records the size of the snapshots made ready unmeasured (one gone meanwhile is skipped). */
  private async measure(): Promise<void> {
    for (const [id, imageBytes] of this.unmeasured) {
      this.unmeasured.delete(id);
      if (await this.options.files.has(id))
        await this.options.snapshots.measured(id, (await this.options.files.size(id)) + imageBytes);
    }
  }

  /** The maintenance in progress, if any: one at a time, and one more when asked meanwhile. */
  private maintaining: Promise<void> | undefined;
  private maintainAgain = false;

  private maintainLater(superseded: string[] = []): void {
    if (this.maintaining) {
      this.maintainAgain = true;
      // Their records are gone: the next pass finds their files and images unnamed and removes them.
      return;
    }
    this.maintaining = (async () => {
      for (const id of superseded) await this.drop(id);
      do {
        this.maintainAgain = false;
        await this.maintain();
      } while (this.maintainAgain);
    })()
      .catch((error) => this.options.warn(error, 'could not remove old setup snapshots'))
      .finally(() => {
        this.maintaining = undefined;
      });
  }

  /**
   * Resolves once no snapshot maintenance is in progress (the removal of superseded snapshots runs after the
   * execution that superseded them has gone on): for whoever must not overlap with it, such as a benchmark's next
   * iteration.
   */
  async settled(): Promise<void> {
    while (this.maintaining) await this.maintaining;
  }

  /**
   * Measures the snapshots made ready unmeasured, then removes expired and least recently used snapshots (past the
   * size bound), and files no record names.
   */
  async maintain(): Promise<void> {
    const { snapshots, files, maxBytes } = this.options;
    // Before the size bound is enforced.
    await this.measure();
    for (const id of await snapshots.expire(maxBytes)) await this.drop(id);
    // Listed before asking: a snapshot whose record is made meanwhile has no files (or image) yet, so none is taken
    // wrongly.
    const onDisk = [...new Set([...(await files.list()), ...((await this.options.images?.list()) ?? [])])];
    const known = await snapshots.existing(onDisk);
    for (const id of onDisk) if (!known.has(id)) await this.drop(id);
  }

  /** Removes a snapshot's files and image (each left for a later pass while an execution still uses it). */
  private async drop(id: string): Promise<void> {
    await this.options.files.remove(id);
    await this.options.images
      ?.remove(id)
      .catch((error) => this.options.warn(error, 'could not remove a snapshot image'));
  }
}

/** A workspace made a snapshot that could be neither mounted nor copied back: its execution cannot go on. */
class WorkspaceLost extends Error {
  constructor(cause: unknown) {
    super('the workspace could not be restored after its snapshot was taken', { cause });
  }
}

function short(key: string): string {
  return key.slice(0, 16);
}
