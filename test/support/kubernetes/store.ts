import { randomUUID } from 'node:crypto';
import { apiVersionOf, qualifiedResource, type ResourceType } from './resources.js';
import { alreadyExists, conflict, gone, notFound } from './status.js';

/**
 * The double's etcd: every object of every served type, one resourceVersion counter across them (as etcd's
 * revision is), and the history of changes that watches replay from a resourceVersion. `compact()` forgets that
 * history, as etcd's compaction does: a watch from before it is answered 410 Gone.
 */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: KubeMetadata;
  [key: string]: unknown;
};

export interface KubeMetadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  type: ResourceType;
  event: WatchEventType;
  revision: number;
  object: KubeObject;
}

type Listener = (change: Change) => void;

export class ObjectStore {
  private revision = 1;
  private compactedAt = 0;
  private readonly objects = new Map<ResourceType, Map<string, KubeObject>>();
  private history: Change[] = [];
  private readonly listeners = new Set<Listener>();

  currentRevision(): string {
    return String(this.revision);
  }

  /**
   * Stores a new object: name from generateName if needed, uid, resourceVersion, creationTimestamp. A uid already
   * set is the server's own (assigned before defaulting, which copies it into labels), never a client's.
   */
  create(type: ResourceType, input: KubeObject): KubeObject {
    const object = structuredClone(input);
    const metadata = object.metadata;
    if (!metadata.name && metadata.generateName) metadata.name = `${metadata.generateName}${randomSuffix()}`;
    const name = metadata.name ?? '';
    const bucket = this.bucket(type);
    const key = keyOf(metadata.namespace, name);
    if (bucket.has(key)) throw alreadyExists(qualifiedResource(type), name, type.group, type.kind);
    object.apiVersion = apiVersionOf(type);
    object.kind = type.kind;
    metadata.uid ??= randomUUID();
    metadata.creationTimestamp = now();
    metadata.generation = 1;
    delete metadata.deletionTimestamp;
    this.revision++;
    metadata.resourceVersion = String(this.revision);
    bucket.set(key, object);
    this.record(type, 'ADDED', object);
    return structuredClone(object);
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const object = this.bucket(type).get(keyOf(namespace, name));
    if (!object) throw notFound(qualifiedResource(type), name, type.group, type.kind);
    return structuredClone(object);
  }

  find(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const object = this.bucket(type).get(keyOf(namespace, name));
    return object ? structuredClone(object) : undefined;
  }

  list(type: ResourceType, namespace: string | undefined, keep: (object: KubeObject) => boolean = () => true) {
    const items = [...this.bucket(type).values()]
      .filter((object) => namespace === undefined || object.metadata.namespace === namespace)
      .filter(keep)
      .map((object) => structuredClone(object));
    return { items, resourceVersion: this.currentRevision() };
  }

  /**
   * Changes an object in place through `change` (a copy it may edit), bumps its resourceVersion and tells the
   * watchers. With `expectedVersion`, a stale writer gets 409 Conflict as on a real server.
   */
  update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    change: (object: KubeObject) => void,
    expectedVersion?: string,
  ): KubeObject {
    const bucket = this.bucket(type);
    const key = keyOf(namespace, name);
    const current = bucket.get(key);
    if (!current) throw notFound(qualifiedResource(type), name, type.group, type.kind);
    if (expectedVersion && expectedVersion !== current.metadata.resourceVersion)
      throw conflict(qualifiedResource(type), name, type.group, type.kind);
    const next = structuredClone(current);
    change(next);
    // What identifies the object stays the server's.
    next.metadata.uid = current.metadata.uid;
    next.metadata.name = current.metadata.name;
    next.metadata.namespace = current.metadata.namespace;
    next.metadata.creationTimestamp = current.metadata.creationTimestamp;
    next.apiVersion = current.apiVersion;
    next.kind = current.kind;
    // An update that changes nothing is no write, as on the API server: no new resourceVersion, no watch event.
    if (JSON.stringify(next) === JSON.stringify(current)) return structuredClone(current);
    if (JSON.stringify(next.spec) !== JSON.stringify(current.spec))
      next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    this.revision++;
    next.metadata.resourceVersion = String(this.revision);
    bucket.set(key, next);
    this.record(type, 'MODIFIED', next);
    return structuredClone(next);
  }

  /** Removes the object for good (finalizers and grace are the controllers' business, before this). */
  remove(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const bucket = this.bucket(type);
    const key = keyOf(namespace, name);
    const current = bucket.get(key);
    if (!current) throw notFound(qualifiedResource(type), name, type.group, type.kind);
    bucket.delete(key);
    this.revision++;
    const removed = structuredClone(current);
    removed.metadata.resourceVersion = String(this.revision);
    this.record(type, 'DELETED', removed);
    return structuredClone(removed);
  }

  /** Every object, of any type, that names `uid` among its owners (for the garbage collector). */
  dependentsOf(uid: string): Array<{ type: ResourceType; object: KubeObject }> {
    const dependents: Array<{ type: ResourceType; object: KubeObject }> = [];
    for (const [type, bucket] of this.objects)
      for (const object of bucket.values())
        if (object.metadata.ownerReferences?.some((owner) => owner.uid === uid))
          dependents.push({ type, object: structuredClone(object) });
    return dependents;
  }

  /**
   * The changes after `fromRevision` of one type (and namespace), for a watch to replay before it goes live; 410
   * when that history was compacted away. `undefined` or '0' means "from now" (the API server's "any").
   */
  changesSince(type: ResourceType, namespace: string | undefined, fromRevision: string | undefined): Change[] {
    if (fromRevision === undefined || fromRevision === '' || fromRevision === '0') return [];
    const from = Number(fromRevision);
    if (!Number.isFinite(from)) throw gone(`invalid resource version: ${fromRevision}`);
    if (from < this.compactedAt) throw gone(`too old resource version: ${fromRevision} (${this.compactedAt})`);
    return this.history.filter(
      (change) =>
        change.type === type &&
        change.revision > from &&
        (namespace === undefined || change.object.metadata.namespace === namespace),
    );
  }

  /**
   * Forgets the history: every resourceVersion a client holds is now too old (410 Gone), as after a compaction
   * that passed it; the revision moves on as it would have with the cluster's other writes.
   */
  compact(): void {
    this.revision++;
    this.compactedAt = this.revision;
    this.history = [];
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private record(type: ResourceType, event: WatchEventType, object: KubeObject): void {
    const change: Change = { type, event, revision: this.revision, object: structuredClone(object) };
    this.history.push(change);
    for (const listener of [...this.listeners]) listener(change);
  }

  private bucket(type: ResourceType): Map<string, KubeObject> {
    let bucket = this.objects.get(type);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(type, bucket);
    }
    return bucket;
  }
}

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Five characters from the API server's alphabet for generated names (no vowels, no look-alikes). */
export function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let suffix = '';
  for (let index = 0; index < 5; index++) suffix += alphabet[Math.floor(Math.random() * alphabet.length)];
  return suffix;
}

/** RFC 3339 at second precision, as the API server writes timestamps. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}
