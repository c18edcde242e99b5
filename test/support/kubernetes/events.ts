import { randomBytes } from 'node:crypto';
import { resourceTypeOfKind } from './resources.js';
import { type KubeObject, now, type ObjectStore } from './store.js';

/**
 * Core v1 Events, recorded as the scheduler, kubelet and Job controller record them (reason, message, type, source),
 * on the object they are about. A client watching or listing Events by `involvedObject.name` sees what it would see
 * on a cluster.
 */
export class EventRecorder {
  constructor(
    private readonly store: ObjectStore,
    private readonly nodeName: string,
  ) {}

  record(
    about: KubeObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    component:
      | 'default-scheduler'
      | 'kubelet'
      | 'job-controller'
      | 'taint-eviction-controller'
      | 'ttl-after-finished-controller',
  ): void {
    const namespace = about.metadata.namespace ?? 'default';
    // An Event outlives nothing it is about here, but the API server would accept it either way.
    const timestamp = now();
    this.store.create(resourceTypeOfKind('Event'), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${about.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: {
        apiVersion: about.apiVersion,
        kind: about.kind,
        name: about.metadata.name,
        namespace,
        uid: about.metadata.uid,
        resourceVersion: about.metadata.resourceVersion,
      },
      reason,
      message,
      type,
      source: component === 'kubelet' ? { component, host: this.nodeName } : { component },
      reportingComponent: component,
      reportingInstance: component === 'kubelet' ? this.nodeName : '',
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    });
  }
}
