import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { ApiServer } from './api-server.js';
import { EventRecorder } from './events.js';
import { Faults } from './faults.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job-controller.js';
import { Kubelet } from './kubelet.js';
import { PodmanContainers } from './podman-containers.js';
import { Authorizer } from './rbac.js';
import { resourceTypeOfKind } from './resources.js';
import { type KubeObject, ObjectStore } from './store.js';
import { Watches } from './watch.js';

/**
 * A Kubernetes API server double on a real HTTPS port (a certificate of its own for 127.0.0.1, which its kubeconfig
 * trusts: the client refuses plain HTTP without skipping TLS verification), for @kubernetes/client-node unchanged: the core, batch,
 * networking and authorization calls a Job-running client makes, with a scheduler, a kubelet that runs each pod's
 * containers with Podman, the Job controller and the garbage collector behind them. docs/kubernetes.md says
 * what it emulates and what it does not.
 */
export interface KubernetesDoubleOptions {
  /** Podman's Docker-compatible socket (HANGAR_TEST_PODMAN_HOST). */
  podmanHost: string;
  /** The namespaces that exist (default: `default` and `hangar-runs`). */
  namespaces?: string[];
  /** The user the double authenticates every request as (RBAC's messages name it). */
  user?: string;
  /** What an unknown field in a written object gets: Strict (400, the default here), Warn or Ignore. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export interface KubernetesDouble {
  /** `https://127.0.0.1:PORT`: the API server's address. */
  url: string;
  /** The PEM certificate the server presents (its kubeconfig's certificate authority). */
  certificate: string;
  /** The bearer token the double accepts (any other is 401). */
  token: string;
  /** A client configuration for this double (cluster, user and context `double`). */
  kubeConfig(namespace?: string): k8s.KubeConfig;
  /** Writes a kubeconfig file for it (for KUBECONFIG) and returns its path. */
  writeKubeconfig(directory: string, namespace?: string): string;
  store: ObjectStore;
  faults: Faults;
  authorizer: Authorizer;
  /** Every request served, in order (method, path with query, RBAC verb, status). */
  requests: ApiServer['requests'];
  /** Every object refused (400 unknown field, 422 invalid), with the message the client was given. */
  refused: ApiServer['refused'];
  /** Ends every open watch with 410 Gone and compacts the history (watching from an old version: 410). */
  expireWatches(): number;
  /** Resolves once at least `count` watches are open at once. */
  watchesOpen(count?: number): Promise<void>;
  /** Resolves when the next watch opens: ask before the client starts watching, then await it. */
  nextWatch(): Promise<void>;
  /** The node of the pod is lost: its containers die, it is marked (DisruptionTarget, an Event) and removed. */
  loseNode(namespace: string, podName: string): Promise<void>;
  /** Resolves with the first object of `kind` in `namespace` for which `predicate` holds, now or once it does. */
  waitFor(kind: string, namespace: string, predicate: (object: KubeObject) => boolean): Promise<KubeObject>;
  stop(): Promise<void>;
}

export async function startKubernetesDouble(options: KubernetesDoubleOptions): Promise<KubernetesDouble> {
  const doubleId = randomBytes(6).toString('hex');
  const token = randomBytes(16).toString('hex');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-kube-double-'));
  // Kubelet's volume directories must be reachable by a pod's non-root user: the temporary root is 0700.
  fs.chmodSync(root, 0o755);
  const nodeName = 'hangar-double-node';
  const store = new ObjectStore();
  const podman = new PodmanContainers(options.podmanHost);
  await podman.removeOrphans();
  const events = new EventRecorder(store, nodeName);
  const faults = new Faults();
  const authorizer = new Authorizer(options.user ?? 'system:serviceaccount:hangar:hangar');
  const kubelet = new Kubelet({ store, podman, events, faults, root, nodeName, doubleId });
  const collector = new GarbageCollector(store, kubelet);
  const jobs = new JobController(store, events, collector);
  const watches = new Watches(store);
  const api = new ApiServer({
    store,
    watches,
    authorizer,
    collector,
    kubelet,
    podman,
    namespaces: new Set(options.namespaces ?? ['default', 'hangar-runs']),
    token,
    fieldValidation: options.fieldValidation ?? 'Strict',
  });
  kubelet.start();
  collector.start();
  jobs.start();
  const certificate = selfSignedCertificate(root);
  const server = https.createServer(
    { key: certificate.key, cert: certificate.cert },
    (request, response) => void api.handle(request, response),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const authority = Buffer.from(certificate.cert).toString('base64');

  const kubeconfigObject = (namespace: string) => ({
    clusters: [{ name: 'double', server: url, caData: authority, skipTLSVerify: false }],
    users: [{ name: 'double', token }],
    contexts: [{ name: 'double', cluster: 'double', user: 'double', namespace }],
    currentContext: 'double',
  });

  return {
    url,
    certificate: certificate.cert,
    token,
    store,
    faults,
    authorizer,
    requests: api.requests,
    refused: api.refused,
    kubeConfig(namespace = 'hangar-runs') {
      const config = new k8s.KubeConfig();
      config.loadFromOptions(kubeconfigObject(namespace));
      return config;
    },
    writeKubeconfig(directory, namespace = 'hangar-runs') {
      const file = path.join(directory, 'kubeconfig');
      const text = [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: double, cluster: {server: "${url}", certificate-authority-data: "${authority}"}}]`,
        `users: [{name: double, user: {token: "${token}"}}]`,
        `contexts: [{name: double, context: {cluster: double, user: double, namespace: ${namespace}}}]`,
        'current-context: double',
        '',
      ].join('\n');
      fs.writeFileSync(file, text, { mode: 0o600 });
      return file;
    },
    expireWatches: () => watches.expireAll(),
    watchesOpen: (count = 1) => watches.whenOpen(count),
    nextWatch: () => watches.next(),
    async loseNode(namespace, podName) {
      await kubelet.loseNode(store.get(resourceTypeOfKind('Pod'), namespace, podName));
    },
    waitFor(kind, namespace, predicate) {
      const type = resourceTypeOfKind(kind);
      return new Promise((resolve) => {
        const found = store.list(type, namespace, predicate).items[0];
        if (found) return resolve(found);
        const unsubscribe = store.subscribe((change) => {
          if (change.type !== type || change.event === 'DELETED' || change.object.metadata.namespace !== namespace)
            return;
          if (!predicate(change.object)) return;
          unsubscribe();
          resolve(structuredClone(change.object));
        });
      });
    },
    async stop() {
      watches.closeAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      jobs.stop();
      collector.stop();
      await kubelet.stop();
      for (const id of await podman.labelled(doubleId)) await podman.remove(id);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A key and a self-signed certificate for 127.0.0.1, made with openssl in the double's directory. */
function selfSignedCertificate(directory: string): { key: string; cert: string } {
  const keyFile = path.join(directory, 'api-server.key');
  const certFile = path.join(directory, 'api-server.crt');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=kube-apiserver',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
}
