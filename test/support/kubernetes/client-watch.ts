import * as k8s from '@kubernetes/client-node';

/**
 * Waits on a watch through the official client until an event's object satisfies `until`: what a test does
 * instead of sleeping. Resolves with that event; rejects when the watch ends first (an ERROR event is an event:
 * `until` sees it, with the Status as its object).
 */
export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'ERROR' | 'BOOKMARK';
  object: T;
}

export async function watchUntil<T = k8s.KubernetesObject & Record<string, unknown>>(
  config: k8s.KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  until: (event: WatchEvent<T>) => boolean,
): Promise<WatchEvent<T>> {
  const watch = new k8s.Watch(config);
  let controller: AbortController | undefined;
  let settled = false;
  return new Promise<WatchEvent<T>>((resolve, reject) => {
    watch
      .watch(
        path,
        query,
        (type, object) => {
          if (settled) return;
          const event = { type, object } as WatchEvent<T>;
          if (!until(event)) return;
          settled = true;
          controller?.abort();
          resolve(event);
        },
        (error) => {
          if (settled) return;
          settled = true;
          reject(error ?? new Error(`the watch of ${path} ended before the awaited event`));
        },
      )
      .then((started) => {
        controller = started;
        if (settled) started.abort();
      }, reject);
  });
}
