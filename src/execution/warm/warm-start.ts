import type { EnvironmentSnapshots, SnapshotRecord, SnapshotScope } from '../../environments/index.js';
import type { SandboxImageSnapshots } from '../sandbox/backend.js';
import type { Workspaces } from '../workspace/workspace.js';
import { type SnapshotKeys, snapshotKeys } from './key.js';
import { SnapshotMaintenance } from './maintenance.js';
import type { PreparedEnvironment, PrepareRequest } from './request.js';
import type { SnapshotFiles } from './snapshot-files.js';
import { updateRepositories } from './update.js';

export type { PreparedEnvironment, PrepareRequest, StartPath } from './request.js';

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
  ) {
    this.maintenance = new SnapshotMaintenance(options);
  }

  /** The snapshots' upkeep: sizes, expiry, the size bound, leftovers. */
  private readonly maintenance: SnapshotMaintenance;

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
        ...(environment.network?.setup !== undefined ? { setupReach: environment.network.setup } : {}),
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
      const updated = await updateRepositories(this.options, older, fetched.commits, request, timed);
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
          this.maintenance.unmeasuredReady(id, imageSize);
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
        await this.maintenance.drop(id).catch(() => undefined);
        throw error;
      }
      const superseded = await snapshots.superseded(scope, keys.baseKey, id);
      // Off the execution's path: removing a snapshot's thousands of files (without following any) takes seconds.
      this.maintenance.maintainLater(superseded);
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
  /**
   * Resolves once no snapshot maintenance is in progress (the removal of superseded snapshots runs after the
   * execution that superseded them has gone on): for whoever must not overlap with it, such as a benchmark's next
   * iteration.
   */
  settled(): Promise<void> {
    return this.maintenance.settled();
  }

  /** Measures the snapshots made ready unmeasured, then removes expired, least recently used and unnamed ones. */
  maintain(): Promise<void> {
    return this.maintenance.maintain();
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
