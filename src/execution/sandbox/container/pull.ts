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

/**
 * Pulls `image` unless the engine has it already, recording the pull's start, progress and time on the timeline.
 * Throws with the engine's reason when it fails. The registry credentials go in the X-Registry-Auth header only.
 */
export async function pullImage(
  client: EngineClient,
  image: string,
  auth: { username: string; password: string; serveraddress?: string } | undefined,
  report: (type: string, payload: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const present = await client.call('GET', `/images/${encodeURIComponent(image)}/json`, undefined, {}, [404]);
  if (present.status !== 404) return;
  const started = Date.now();
  await report('container_image_pull_started', { image });
  const { fromImage, tag } = pullTarget(image);
  const query = new URLSearchParams({ fromImage, ...(tag ? { tag } : {}) });
  const headers: Record<string, string> = auth
    ? { 'X-Registry-Auth': Buffer.from(JSON.stringify(auth)).toString('base64url') }
    : {};
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
  // Podman's service can end a failed pull without an error line: the image must be there now.
  const after = await client.call('GET', `/images/${encodeURIComponent(image)}/json`, undefined, {}, [404]);
  if (after.status === 404) throw new Error('the engine finished the pull, but the image is not there');
  await report('container_image_pulled', { image, duration_ms: Date.now() - started });
}

/**
 * The registry an image reference names, as the engine's auth config says it: the first component when it is a host
 * (a dot or a port in it, or `localhost`), else Docker Hub.
 */
export function registryOf(image: string): string {
  const slash = image.indexOf('/');
  const first = slash === -1 ? '' : image.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'https://index.docker.io/v1/';
}
