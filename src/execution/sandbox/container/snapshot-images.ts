import { parseImageReference, qualifiedReference, SNAPSHOT_REPOSITORY } from '../../../platform/image-reference.js';
import { type EngineClient, EngineError } from './engine-client.js';
import { imageId } from './pull.js';

/**
 * The repository setup snapshots' images are committed to, each tagged with its snapshot's id. No environment may
 * name an image in it (environmentImageProblem): a snapshot is reached only by its own team's record.
 */
const REPOSITORY = SNAPSHOT_REPOSITORY;

/**
 * The container half of a setup snapshot (issue 28): the execution's container, committed once setup has succeeded,
 * as an image the engine keeps (`POST /commit`, the same on Docker and on Podman's service). Everything setup left
 * in the container's file system outside the workspace (packages installed, caches, tools) is in it; the workspace is
 * a bind mount, which a commit leaves out, and is kept with the snapshot's files. Nothing secret is in it: setup
 * gets no secrets, and the commit is taken before the agent (and its task token) starts.
 *
 * The committed image carries the container's labels, among them the workspace root's: the snapshots of this
 * replica are listed by it, and those no record names any more are removed.
 */
export class SnapshotImages {
  constructor(
    private readonly client: EngineClient,
    /** The label every container (and so every committed image) of this workspace root carries. */
    private readonly rootLabel: { name: string; value: string },
    private readonly containerOf: (workspace: string) => string | undefined,
    private readonly defaultImage: string,
  ) {}

  /** The image a warm start's container is created from. */
  reference(id: string): string {
    if (!/^[0-9a-f]{24}$/.test(id)) throw new Error('not a snapshot id');
    return `${REPOSITORY}:${id}`;
  }

  /** The engine's id of an image (the environment's, or the operator's default); undefined when it is not there. */
  async imageId(image: string | undefined): Promise<string | undefined> {
    if (image === undefined) return imageId(this.client, this.defaultImage);
    // The name the container sandbox pulls and resolves (ImageAccess), so the key is of the image it runs.
    const parsed = parseImageReference(image);
    return 'problem' in parsed ? undefined : imageId(this.client, qualifiedReference(parsed));
  }

  async has(id: string): Promise<boolean> {
    const found = await this.client.call(
      'GET',
      `/images/${encodeURIComponent(this.reference(id))}/json`,
      undefined,
      {},
      [404],
    );
    return found.status !== 404;
  }

  /**
   * Commits the workspace's container as the snapshot `id`'s image; returns the size of the layer it adds. Without
   * pausing it: setup is over, and nothing but the container's idle process runs in it.
   */
  async commit(workspace: string, id: string): Promise<number> {
    const container = this.containerOf(workspace);
    if (!container) throw new Error('the execution has no container to commit');
    const query = new URLSearchParams({
      container,
      repo: REPOSITORY,
      tag: id,
      pause: 'false',
      comment: 'a Hangar setup snapshot',
    });
    // An empty configuration (Podman's service refuses a missing body): the container's own is kept.
    await this.client.call('POST', `/commit?${query}`, {});
    const history = await this.client.call<Array<{ Size?: number }>>(
      'GET',
      `/images/${encodeURIComponent(this.reference(id))}/history`,
    );
    return Number(history.body[0]?.Size ?? 0);
  }

  /**
   * How many layers a snapshot's image has above `base` (an image id): each updated start commits one more on top of
   * the snapshot it started from, and an overlay stack has a bound (the kernel's 128 lower layers, and every layer
   * slows lookups), so a deep one is not built upon.
   */
  async layersAbove(id: string, base: string): Promise<number> {
    const count = async (image: string) =>
      (await this.client.call<unknown[]>('GET', `/images/${encodeURIComponent(image)}/history`)).body.length;
    return (await count(this.reference(id))) - (await count(base));
  }

  /**
   * Removes a snapshot's image. Not forced: an image a container still runs from (a warm execution in progress) is
   * refused by the engine (Podman's force would remove that container), and goes at a later maintenance. One a newer
   * snapshot was committed on top of is untagged, its layers kept under the newer.
   */
  async remove(id: string): Promise<void> {
    await this.client
      .call('DELETE', `/images/${encodeURIComponent(this.reference(id))}`, undefined, {}, [404])
      .catch((error: unknown) => {
        if (!(error instanceof EngineError) || error.status !== 409) throw error;
      });
  }

  /** The snapshot ids whose images this workspace root's engine holds. */
  async list(): Promise<string[]> {
    const filters = JSON.stringify({ label: [`${this.rootLabel.name}=${this.rootLabel.value}`] });
    const { body } = await this.client.call<Array<{ RepoTags?: string[] | null; Names?: string[] | null }>>(
      'GET',
      `/images/json?filters=${encodeURIComponent(filters)}`,
    );
    const ids = new Set<string>();
    for (const image of body)
      for (const tag of [...(image.RepoTags ?? []), ...(image.Names ?? [])]) {
        const match = /^(?:localhost\/)?hangar-snapshot:([0-9a-f]{24})$/.exec(tag);
        if (match) ids.add(match[1]!);
      }
    return [...ids];
  }
}
