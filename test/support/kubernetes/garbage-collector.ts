import type { Kubelet } from './kubelet.js';
import { type ResourceType, resourceTypeOfKind } from './resources.js';
import { type KubeObject, now, type ObjectStore } from './store.js';

/**
 * Deletion as the API server and its garbage collector do it:
 * - a Pod is deleted gracefully: it is marked (deletionTimestamp), kubelet stops its containers within the grace
 *   period, then it goes;
 * - an owner's dependents (by ownerReferences) follow the propagation policy: `Foreground` marks the owner with
 *   the foregroundDeletion finalizer, deletes the dependents and removes the owner once they are gone;
 *   `Background` removes the owner at once and the dependents after; `Orphan` leaves the dependents, without the
 *   owner reference. A Job's default through the API is `Orphan` (batch/v1 kept it for compatibility), everything
 *   else's `Background`.
 * Anything that goes, by whatever path, has its remaining dependents collected.
 */
export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

const POD = resourceTypeOfKind('Pod');

export class GarbageCollector {
  private unsubscribe: (() => void) | undefined;
  private readonly waiting = new Map<string, { type: ResourceType; namespace?: string; name: string }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly kubelet: Kubelet,
  ) {}

  start(): void {
    this.unsubscribe = this.store.subscribe((change) => {
      if (change.event !== 'DELETED') return;
      const { uid } = change.object.metadata;
      queueMicrotask(() => {
        // The owner went: what still names it is collected in the background.
        if (uid)
          for (const dependent of this.store.dependentsOf(uid))
            void this.delete(dependent.type, dependent.object, { propagationPolicy: 'Background' });
        // A dependent went: an owner waiting in foreground deletion may go now.
        for (const owner of change.object.metadata.ownerReferences ?? []) this.finishForeground(owner.uid);
      });
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** Deletes `object` (already read) as a DELETE request asks; resolves with what the API server would answer. */
  async delete(
    type: ResourceType,
    object: KubeObject,
    options: { propagationPolicy?: PropagationPolicy; gracePeriodSeconds?: number },
  ): Promise<{ object: KubeObject; gone: boolean }> {
    const { namespace, name = '' } = object.metadata;
    if (type === POD) return { object: this.deletePod(object, options.gracePeriodSeconds), gone: false };
    const policy = options.propagationPolicy ?? (type.kind === 'Job' ? 'Orphan' : 'Background');
    const uid = object.metadata.uid ?? '';
    const dependents = this.store.dependentsOf(uid);
    if (policy === 'Orphan') {
      for (const dependent of dependents)
        this.store.update(
          dependent.type,
          dependent.object.metadata.namespace,
          dependent.object.metadata.name ?? '',
          (copy) => {
            copy.metadata.ownerReferences = copy.metadata.ownerReferences?.filter((owner) => owner.uid !== uid);
            if (copy.metadata.ownerReferences?.length === 0) delete copy.metadata.ownerReferences;
          },
        );
      return { object: this.store.remove(type, namespace, name), gone: true };
    }
    if (policy === 'Background' || dependents.length === 0)
      return { object: this.store.remove(type, namespace, name), gone: true };
    if (object.metadata.deletionTimestamp) return { object, gone: false };
    const marked = this.store.update(type, namespace, name, (copy) => {
      copy.metadata.deletionTimestamp = now();
      copy.metadata.deletionGracePeriodSeconds = 0;
      copy.metadata.finalizers = [...new Set([...(copy.metadata.finalizers ?? []), 'foregroundDeletion'])];
    });
    this.waiting.set(uid, { type, namespace, name });
    for (const dependent of dependents)
      void this.delete(dependent.type, dependent.object, { propagationPolicy: 'Foreground' });
    return { object: marked, gone: false };
  }

  private deletePod(pod: KubeObject, gracePeriodSeconds: number | undefined): KubeObject {
    const { namespace, name = '' } = pod.metadata;
    const grace =
      gracePeriodSeconds ??
      (pod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ??
      30;
    const marked = pod.metadata.deletionTimestamp
      ? pod
      : this.store.update(POD, namespace, name, (copy) => {
          copy.metadata.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
          copy.metadata.deletionGracePeriodSeconds = grace;
        });
    void this.kubelet.deletePod(marked, grace);
    return marked;
  }

  private finishForeground(ownerUid: string): void {
    const owner = this.waiting.get(ownerUid);
    if (!owner || this.store.dependentsOf(ownerUid).length > 0) return;
    this.waiting.delete(ownerUid);
    const current = this.store.find(owner.type, owner.namespace, owner.name);
    if (current?.metadata.uid === ownerUid) this.store.remove(owner.type, owner.namespace, owner.name);
  }
}
