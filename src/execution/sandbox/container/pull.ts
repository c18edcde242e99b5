import { isLocalImage, parseImageReference, qualifiedReference } from '../../../platform/image-reference.js';
import type { EngineClient } from './engine-client.js';

/** How often a pull in progress is recorded on the timeline. */
const PROGRESS_EVERY_MS = 5000;

/**
 * `fromImage` and `tag` of a reference: without a tag the engine would pull every tag of the repository, so the
 * default `latest` is said explicitly. A digest reference is passed whole.
 */
export function pullTarget(image: string): { fromImage: string; tag?: string } {
  if (image.includes('@')) return { fromImage: image };
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > slash
    ? { fromImage: image.slice(0, colon), tag: image.slice(colon + 1) }
    : { fromImage: image, tag: 'latest' };
}

/** Registry credentials as the engine's pull takes them (X-Registry-Auth). */
export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress?: string;
}

/**
 * The X-Registry-Auth header: the credentials' JSON in base64url WITH its padding (RFC 4648 section 5), as Docker's own
 * client encodes it (Go's base64.URLEncoding in moby's EncodeAuthConfig). Podman 4.3's service refuses the unpadded
 * form ("failed to parse X-Registry-Auth header: unexpected EOF") whenever the JSON's length is not a multiple of 3.
 */
export function registryAuthHeader(auth: RegistryAuth): string {
  return Buffer.from(JSON.stringify(auth)).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * Which image an execution starts from, asked of the engine each time (issue 47.2). The engine's store is shared by
 * every team, and it gives whatever it holds under a name to whoever asks: an image one team pulled with its
 * credentials must not be there for another team's run without credentials. So:
 *
 * - a reference with credentials is pulled with them every time, image present or not: the registry checks them (a
 *   pull of a present image is a manifest request);
 * - a registry reference without credentials is used as it is only once this process saw the registry give that very
 *   image (by its ID) to an anonymous pull; otherwise it is pulled anonymously first, and a registry that refuses
 *   fails the run, even when the engine holds the image;
 * - `localhost/` images (imported, loaded or committed on this engine: never pulled) and the operator's default image
 *   are used when present, as before.
 *
 * The container is then created from the image's ID, not its name: a name moved by a pull in between (another
 * team's) does not change what this execution runs.
 */
export class ImageAccess {
  /** Image IDs this process saw an anonymous pull give: public, so usable by any run without credentials. */
  private readonly publicImages = new Set<string>();
  /** Whether the engine's pull asks the registry even for an image it holds: see checkAccess. */
  private pullAsksRegistry: Promise<boolean> | undefined;

  constructor(
    private readonly client: EngineClient,
    /** The operator's HANGAR_CONTAINER_IMAGE: meant for every run, pulled only when absent. */
    private readonly defaultImage: string,
  ) {}

  /** The ID of the image to create the execution's container from; throws why there is none (the run's message). */
  async resolve(
    image: string,
    auth: RegistryAuth | undefined,
    report: (type: string, payload: Record<string, unknown>) => Promise<void>,
  ): Promise<string> {
    if (image === this.defaultImage && !auth) {
      const present = await imageId(this.client, image);
      if (present) return present;
      await pullImage(this.client, image, undefined, report);
      return this.pulled(image);
    }
    const parsed = parseImageReference(image);
    if ('problem' in parsed) throw new Error(parsed.problem);
    const reference = qualifiedReference(parsed);
    if (isLocalImage(parsed)) {
      const present = await imageId(this.client, reference);
      if (!present) throw new Error('it is not on this engine (a localhost/ image is never pulled: load it there)');
      return present;
    }
    if (auth) {
      await this.checkAccess(reference, auth);
      await pullImage(this.client, reference, auth, report);
      return this.pulled(reference);
    }
    const present = await imageId(this.client, reference);
    if (present && this.publicImages.has(present)) return present;
    try {
      await this.checkAccess(reference, undefined);
      await pullImage(this.client, reference, undefined, report);
    } catch (error) {
      if (!present) throw error;
      throw new Error(
        `${(error as Error).message} (the registry gives it to no one without credentials; an image pulled with another run's credentials is not for runs without them: name the registry's credentials in the environment's registry_secret_name)`,
      );
    }
    const id = await this.pulled(reference);
    this.publicImages.add(id);
    return id;
  }

  /**
   * Asks the registry, through the engine, whether these credentials (or none) may have the image. Podman's pull
   * always asks the registry, so the pull itself is the check there. Docker's pull of a digest it already holds asks
   * nothing (a digest's content cannot change, measured: team B's anonymous pull of team A's private image by digest
   * succeeded), so on Docker the engine's GET /distribution/<reference>/json asks it first: it always goes to the
   * registry, with the same X-Registry-Auth (Podman 4.3 does not have it).
   */
  private async checkAccess(reference: string, auth: RegistryAuth | undefined): Promise<void> {
    this.pullAsksRegistry ??= this.client
      .call<{ Components?: Array<{ Name?: string }> | null }>('GET', '/version')
      .then(
        ({ body }) => (body?.Components ?? []).some((component) => /podman/i.test(component.Name ?? '')),
        () => false,
      );
    if (await this.pullAsksRegistry) return;
    const headers: Record<string, string> = auth ? { 'X-Registry-Auth': registryAuthHeader(auth) } : {};
    await this.client.call('GET', `/distribution/${encodeURIComponent(reference)}/json`, undefined, headers);
  }

  private async pulled(reference: string): Promise<string> {
    const id = await imageId(this.client, reference);
    // Podman's service can end a failed pull without an error line: the image must be there now.
    if (!id) throw new Error('the engine finished the pull, but the image is not there');
    return id;
  }
}

/** The engine's ID of the image a name gives; undefined when it has none. */
export async function imageId(client: EngineClient, image: string): Promise<string | undefined> {
  const found = await client.call<{ Id?: string }>(
    'GET',
    `/images/${encodeURIComponent(image)}/json`,
    undefined,
    {},
    [404],
  );
  return found.status === 404 ? undefined : found.body.Id;
}

/**
 * Pulls `image`, recording the pull's start, progress and time on the timeline. Throws with the engine's reason when
 * it fails. The registry credentials go in the X-Registry-Auth header only.
 */
export async function pullImage(
  client: EngineClient,
  image: string,
  auth: RegistryAuth | undefined,
  report: (type: string, payload: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const started = Date.now();
  await report('container_image_pull_started', { image });
  const { fromImage, tag } = pullTarget(image);
  const query = new URLSearchParams({ fromImage, ...(tag ? { tag } : {}) });
  const headers: Record<string, string> = auth ? { 'X-Registry-Auth': registryAuthHeader(auth) } : {};
  const response = await client.stream('POST', `/images/create?${query}`, headers);
  let failure: string | undefined;
  let buffered = '';
  let lastReport = Date.now();
  const layers = new Map<string, { current: number; total: number }>();
  const reports: Array<Promise<void>> = [];
  for await (const chunk of response) {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      let message: {
        error?: string;
        errorDetail?: { message?: string };
        id?: string;
        progressDetail?: { current?: number; total?: number };
      };
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message.error || message.errorDetail?.message) failure = message.errorDetail?.message ?? message.error;
      if (message.id && message.progressDetail?.total)
        layers.set(message.id, { current: message.progressDetail.current ?? 0, total: message.progressDetail.total });
      if (Date.now() - lastReport >= PROGRESS_EVERY_MS) {
        lastReport = Date.now();
        const sum = (key: 'current' | 'total') => [...layers.values()].reduce((total, layer) => total + layer[key], 0);
        reports.push(
          report('container_image_pull_progress', {
            image,
            elapsed_ms: Date.now() - started,
            downloaded_bytes: sum('current'),
            total_bytes: sum('total'),
          }),
        );
      }
    }
  }
  await Promise.all(reports);
  if (failure) throw new Error(failure.trim());
  await report('container_image_pulled', { image, duration_ms: Date.now() - started });
}

/**
 * The registry an image reference names, as the engine's auth config says it: the first component when it is a host
 * (a dot or a port in it, or `localhost`), else Docker Hub.
 */
export function registryOf(image: string): string {
  const slash = image.indexOf('/');
  const first = slash === -1 ? '' : image.slice(0, slash);
  const host = first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'docker.io';
  return host === 'docker.io' || host === 'index.docker.io' ? 'https://index.docker.io/v1/' : host;
}
