import type http from 'node:http';
import type { ResourceType } from './resources.js';
import type { Selector } from './selectors.js';
import { gone, StatusError } from './status.js';
import type { Change, ObjectStore } from './store.js';

/**
 * A watch, as the API server streams it: one JSON object a line, `{"type": "ADDED"|"MODIFIED"|"DELETED", "object"}`,
 * first the changes after the requested resourceVersion, then live ones, until `timeoutSeconds`, the client's
 * hang-up, or the double expiring its watches: then an `ERROR` event whose object is a 410 Expired Status ends the
 * stream, and watching again from the old resourceVersion is answered the same (the client must list again).
 */
export class Watches {
  private readonly open = new Set<{ expire: () => void; close: () => void }>();
  private readonly waiters = new Set<{ count: number; resolve: () => void }>();
  private readonly nextOpen = new Set<() => void>();

  constructor(private readonly store: ObjectStore) {}

  serve(
    response: http.ServerResponse,
    options: {
      type: ResourceType;
      namespace: string | undefined;
      resourceVersion: string | undefined;
      timeoutSeconds: number | undefined;
      bookmarks: boolean;
      matches: Selector;
    },
  ): void {
    response.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache',
    });
    // The API server answers a watch's headers at once: a client that awaits the response must not wait for an event.
    response.flushHeaders();
    const send = (type: string, object: unknown) => response.write(`${JSON.stringify({ type, object })}\n`);
    let replay: Change[];
    try {
      replay = this.store.changesSince(options.type, options.namespace, options.resourceVersion);
    } catch (error) {
      if (!(error instanceof StatusError)) throw error;
      send('ERROR', error.status);
      response.end();
      return;
    }
    const relevant = (change: Change) =>
      change.type === options.type &&
      (options.namespace === undefined || change.object.metadata.namespace === options.namespace) &&
      options.matches(change.object);
    for (const change of replay) if (relevant(change)) send(change.event, change.object);
    const unsubscribe = this.store.subscribe((change) => {
      if (relevant(change)) send(change.event, change.object);
    });
    let timer: NodeJS.Timeout | undefined;
    const entry = {
      expire: () => {
        send('ERROR', gone().status);
        entry.close();
      },
      close: () => {
        if (!this.open.has(entry)) return;
        this.open.delete(entry);
        unsubscribe();
        clearTimeout(timer);
        response.end();
      },
    };
    this.open.add(entry);
    for (const resolve of [...this.nextOpen]) resolve();
    this.nextOpen.clear();
    for (const waiter of [...this.waiters])
      if (this.open.size >= waiter.count) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    if (options.bookmarks)
      send('BOOKMARK', {
        kind: options.type.kind,
        apiVersion: options.type.group ? `${options.type.group}/${options.type.version}` : options.type.version,
        metadata: { resourceVersion: this.store.currentRevision() },
      });
    if (options.timeoutSeconds) timer = setTimeout(entry.close, options.timeoutSeconds * 1000);
    response.on('close', entry.close);
  }

  /** Ends every open watch with 410 Gone and forgets the history, as an etcd compaction past them would. */
  expireAll(): number {
    const count = this.open.size;
    this.store.compact();
    for (const entry of [...this.open]) entry.expire();
    return count;
  }

  /** Resolves once `count` watches are open at once: a test knows its client is watching, without a sleep. */
  whenOpen(count: number): Promise<void> {
    if (this.open.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ count, resolve }));
  }

  /** Resolves when the next watch opens (ask before the client starts it). */
  next(): Promise<void> {
    return new Promise((resolve) => this.nextOpen.add(resolve));
  }

  /** The number of watches open now (a test waits for its client's watch to be established). */
  get count(): number {
    return this.open.size;
  }

  closeAll(): void {
    for (const entry of [...this.open]) entry.close();
  }
}
