import type http from 'node:http';
import type { Kubelet } from './kubelet.js';
import type { PodStatus } from './pod-status.js';
import type { PodmanContainers } from './podman-containers.js';
import { badRequest } from './status.js';
import type { KubeObject } from './store.js';

/**
 * `GET /api/v1/namespaces/NS/pods/NAME/log`: the container's output from Podman, plain text, followed when asked
 * (`follow=true` streams until the container ends), with `tailLines`, `timestamps` and `limitBytes`. Which
 * container, and the refusals when it cannot say, as the API server words them.
 */
export async function servePodLog(
  response: http.ServerResponse,
  query: URLSearchParams,
  pod: KubeObject,
  kubelet: Kubelet,
  podman: PodmanContainers,
): Promise<void> {
  const spec = pod.spec as { containers: Array<{ name: string }>; initContainers?: Array<{ name: string }> };
  const main = spec.containers.map((container) => container.name);
  const inits = (spec.initContainers ?? []).map((container) => container.name);
  const name = pod.metadata.name ?? '';
  let container = query.get('container') ?? pod.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
  if (!container) {
    if (main.length !== 1)
      throw badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${main.join(' ')}]${inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''}`,
      );
    container = main[0]!;
  }
  if (!main.includes(container) && !inits.includes(container))
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  const id = kubelet.containerId(pod.metadata.uid ?? '', container);
  if (!id) {
    const status = pod.status as PodStatus | undefined;
    const entry = [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])].find(
      (candidate) => candidate.name === container,
    );
    const reason = entry?.state.waiting?.reason ?? 'ContainerCreating';
    const words =
      reason === 'ImagePullBackOff' || reason === 'ErrImagePull' ? 'trying and failing to pull image' : reason;
    throw badRequest(`container "${container}" in pod "${name}" is waiting to start: ${words}`);
  }
  const tail = query.get('tailLines');
  const stream = await podman.logs(id, {
    follow: query.get('follow') === 'true',
    ...(tail ? { tailLines: Number(tail) } : {}),
    timestamps: query.get('timestamps') === 'true',
  });
  response.writeHead(200, { 'Content-Type': 'text/plain' });
  let remaining = query.get('limitBytes') ? Number(query.get('limitBytes')) : Number.POSITIVE_INFINITY;
  stream.on('data', (chunk: Buffer) => {
    if (remaining <= 0) return;
    const part = chunk.subarray(0, Math.min(chunk.length, remaining));
    remaining -= part.length;
    response.write(part);
    if (remaining <= 0) stream.destroy();
  });
  stream.on('end', () => response.end());
  stream.on('close', () => response.end());
  response.on('close', () => stream.destroy());
}
