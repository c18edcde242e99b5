import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { admit, type FieldValidation } from './admission.js';
import { defaultJob, defaultPodSpec } from './defaults.js';
import type { GarbageCollector } from './garbage-collector.js';
import { and, deleteOptions, json, notFoundResource, readBody } from './http-io.js';
import type { Kubelet } from './kubelet.js';
import { applyPatch } from './patch.js';
import { servePodLog } from './pod-log.js';
import type { PodmanContainers } from './podman-containers.js';
import type { Authorizer } from './rbac.js';
import { apiVersionOf, qualifiedResource, type ResourceType, resourceTypeOfKind } from './resources.js';
import { parseTarget, type Target, verbOf } from './routes.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import {
  conflict,
  forbidden,
  invalid,
  methodNotAllowed,
  notFound,
  StatusError,
  success,
  unauthorized,
} from './status.js';
import { type KubeObject, type ObjectStore, randomSuffix } from './store.js';
import type { Watches } from './watch.js';

/**
 * The double's REST handlers: one request in, the API server's answer out (objects, lists, Status errors), after
 * authentication (a bearer token) and authorization (rbac.ts). Every object written is checked against the
 * OpenAPI schemas and the API server's own rules first; a bad one is answered 422 Invalid, an unknown field 400
 * (as `fieldValidation=Strict`; stricter than a server's default warning, so a misspelt field cannot pass).
 */
export interface RecordedRequest {
  method: string;
  path: string;
  verb: string;
  status: number;
}

export interface ApiServerDeps {
  store: ObjectStore;
  watches: Watches;
  authorizer: Authorizer;
  collector: GarbageCollector;
  kubelet: Kubelet;
  podman: PodmanContainers;
  namespaces: Set<string>;
  token: string;
  fieldValidation: FieldValidation;
}

const NAMESPACE = resourceTypeOfKind('Namespace');

export class ApiServer {
  readonly requests: RecordedRequest[] = [];
  /** Every object refused with 422 or 400, with its causes: a test can say what the client sent wrong. */
  readonly refused: Array<{ kind: string; name: string; message: string }> = [];

  constructor(private readonly deps: ApiServerDeps) {}

  async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://double');
    const method = request.method ?? 'GET';
    const record = (status: number, verb: string) =>
      this.requests.push({ method, path: url.pathname + url.search, verb, status });
    try {
      if (url.pathname === '/version')
        return json(response, 200, {
          major: '1',
          minor: '34',
          gitVersion: 'v1.34.0-hangar-double',
          platform: 'linux/amd64',
        });
      if (['/healthz', '/livez', '/readyz'].includes(url.pathname)) {
        response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        return;
      }
      if (request.headers.authorization !== `Bearer ${this.deps.token}`) throw unauthorized();
      const body = await readBody(request);
      if (url.pathname === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews' && method === 'POST') {
        record(201, 'create');
        return this.accessReview(response, body);
      }
      const target = parseTarget(url.pathname);
      if (!target?.type) throw notFoundResource();
      const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
      const verb = verbOf(method, target, watch);
      this.authorize(verb, target);
      await this.dispatch(verb, target, target.type, url.searchParams, body, request, response);
      record(response.statusCode, verb);
    } catch (error) {
      if (!(error instanceof StatusError)) {
        json(response, 500, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `the Kubernetes double failed: ${(error as Error).stack}`,
          reason: 'InternalError',
          code: 500,
        });
        return;
      }
      record(error.status.code, '');
      if (!response.headersSent) json(response, error.status.code, error.status);
      else response.end();
    }
  }

  private authorize(verb: string, target: Target): void {
    const attributes = {
      verb,
      group: target.group,
      resource: target.type?.namespaced === false && !target.namespace ? target.plural : target.plural,
      ...(target.subresource ? { subresource: target.subresource } : {}),
      ...(target.namespace ? { namespace: target.namespace } : {}),
      ...(target.name ? { name: target.name } : {}),
    };
    if (!this.deps.authorizer.allowed(attributes))
      throw forbidden({ user: this.deps.authorizer.user, plural: target.plural, ...attributes });
  }

  private async dispatch(
    verb: string,
    target: Target,
    type: ResourceType,
    query: URLSearchParams,
    body: unknown,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const { store } = this.deps;
    const namespace = type.namespaced ? target.namespace : undefined;
    if (type === NAMESPACE) return this.namespaceRequest(verb, target, response);
    if (type.namespaced && !target.namespace && verb !== 'list' && verb !== 'watch') throw notFoundResource();
    if (!(type.verbs as readonly string[]).includes(verb === 'deletecollection' ? 'delete' : verb))
      throw methodNotAllowed();
    if (target.subresource) {
      if (type.kind === 'Pod' && target.subresource === 'log' && verb === 'get') {
        const pod = store.get(type, namespace, target.name ?? '');
        return servePodLog(response, query, pod, this.deps.kubelet, this.deps.podman);
      }
      if (target.subresource === 'status' && verb === 'get')
        return json(response, 200, store.get(type, namespace, target.name ?? ''));
      throw methodNotAllowed();
    }
    switch (verb) {
      case 'get':
        return json(response, 200, store.get(type, namespace, target.name ?? ''));
      case 'list':
        return json(response, 200, this.list(type, namespace, query));
      case 'watch':
        return this.deps.watches.serve(response, {
          type,
          namespace,
          resourceVersion: query.get('resourceVersion') ?? undefined,
          timeoutSeconds: query.get('timeoutSeconds') ? Number(query.get('timeoutSeconds')) : undefined,
          bookmarks: query.get('allowWatchBookmarks') === 'true',
          matches: and(
            parseLabelSelector(query.get('labelSelector')),
            parseFieldSelector(query.get('fieldSelector'), type.kind),
          ),
        });
      case 'create':
        if (!this.deps.namespaces.has(target.namespace ?? ''))
          throw notFound('namespaces', target.namespace ?? '', '', 'Namespace');
        return this.create(type, target.namespace ?? '', body, query, response);
      case 'update':
      case 'patch':
        return this.replace(verb, type, target, body, query, request, response);
      case 'delete':
        return this.delete(type, namespace, target.name ?? '', body, query, response);
      case 'deletecollection': {
        const { items } = this.list(type, namespace, query);
        for (const item of items)
          await this.deps.collector.delete(type, { ...item, metadata: item.metadata }, deleteOptions(body, query));
        return json(response, 200, success());
      }
    }
    throw methodNotAllowed();
  }

  private list(type: ResourceType, namespace: string | undefined, query: URLSearchParams) {
    const labels = parseLabelSelector(query.get('labelSelector'));
    const fields = parseFieldSelector(query.get('fieldSelector'), type.kind);
    const { items, resourceVersion } = this.deps.store.list(
      type,
      namespace,
      (object) => labels(object) && fields(object),
    );
    items.sort((a, b) =>
      `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
    );
    // Pages: `continue` is the offset, encoded as the API server's tokens are (opaque to clients).
    const limit = Number(query.get('limit') ?? 0);
    const offset = query.get('continue') ? Number(Buffer.from(query.get('continue') ?? '', 'base64url').toString()) : 0;
    const page = limit > 0 ? items.slice(offset, offset + limit) : items.slice(offset);
    const more = limit > 0 && offset + limit < items.length;
    return {
      kind: `${type.kind}List`,
      apiVersion: apiVersionOf(type),
      metadata: {
        resourceVersion,
        ...(more
          ? {
              continue: Buffer.from(String(offset + limit)).toString('base64url'),
              remainingItemCount: items.length - offset - limit,
            }
          : {}),
      },
      // A list's items carry no kind or apiVersion, as a real server's JSON lists of built-in types.
      items: page.map(({ kind: _kind, apiVersion: _apiVersion, ...item }) => item),
    };
  }

  private create(
    type: ResourceType,
    namespace: string,
    body: unknown,
    query: URLSearchParams,
    response: http.ServerResponse,
  ): void {
    const object = this.admit(type, namespace, body, query, response);
    object.metadata.uid = randomUUID();
    if (!object.metadata.name && object.metadata.generateName)
      object.metadata.name = `${object.metadata.generateName}${randomSuffix()}`;
    if (type.kind === 'Job') defaultJob(object);
    if (type.kind === 'Pod') {
      defaultPodSpec(object.spec as Record<string, unknown>);
      object.status = { phase: 'Pending', conditions: [], qosClass: 'BestEffort' };
    }
    if (query.get('dryRun') === 'All')
      return json(response, 201, { ...object, apiVersion: apiVersionOf(type), kind: type.kind });
    json(response, 201, this.deps.store.create(type, object));
  }

  /** Parses, checks and normalizes an object a client sent; throws the API server's refusal. */
  private admit(
    type: ResourceType,
    namespace: string,
    body: unknown,
    query: URLSearchParams,
    response: http.ServerResponse,
  ): KubeObject {
    const mode = (query.get('fieldValidation') as FieldValidation | null) ?? this.deps.fieldValidation;
    const { object, warnings } = admit(type, namespace, body, mode, this.refused);
    if (warnings.length) response.setHeader('Warning', warnings);
    return object;
  }

  private replace(
    verb: 'update' | 'patch',
    type: ResourceType,
    target: Target,
    body: unknown,
    query: URLSearchParams,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): void {
    const namespace = target.namespace;
    const name = target.name ?? '';
    const current = this.deps.store.get(type, namespace, name);
    const next =
      verb === 'patch'
        ? applyPatch(current, body, request.headers['content-type'] ?? '')
        : (body as Record<string, unknown>);
    const admitted = this.admit(
      type,
      namespace ?? '',
      { ...next, metadata: { ...(next.metadata as object), name } },
      query,
      response,
    );
    const expected =
      verb === 'update' ? (next.metadata as { resourceVersion?: string } | undefined)?.resourceVersion : undefined;
    if (verb === 'update' && !expected) throw conflict(qualifiedResource(type), name, type.group, type.kind);
    const updated = this.deps.store.update(
      type,
      namespace,
      name,
      (copy) => {
        // Spec and metadata are the client's; status stays the controllers'.
        const { status } = copy;
        for (const key of Object.keys(copy)) if (key !== 'metadata' && key !== 'status') delete copy[key];
        Object.assign(copy, admitted, {
          status,
          metadata: {
            ...copy.metadata,
            labels: admitted.metadata.labels,
            annotations: admitted.metadata.annotations,
            ownerReferences: admitted.metadata.ownerReferences,
            finalizers: admitted.metadata.finalizers,
          },
        });
      },
      expected,
    );
    json(response, 200, updated);
  }

  private async delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    query: URLSearchParams,
    response: http.ServerResponse,
  ): Promise<void> {
    const object = this.deps.store.get(type, namespace, name);
    const options = deleteOptions(body, query);
    const preconditions = (body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)
      ?.preconditions;
    if (
      (preconditions?.uid && preconditions.uid !== object.metadata.uid) ||
      (preconditions?.resourceVersion && preconditions.resourceVersion !== object.metadata.resourceVersion)
    )
      throw conflict(qualifiedResource(type), name, type.group, type.kind);
    if (query.get('dryRun') === 'All') return json(response, 200, object);
    const result = await this.deps.collector.delete(type, object, options);
    if (type.kind === 'Pod' || !result.gone) return json(response, result.gone ? 200 : 202, result.object);
    json(response, 200, success({ name, group: type.group, kind: type.plural, uid: object.metadata.uid ?? '' }));
  }

  private namespaceRequest(verb: string, target: Target, response: http.ServerResponse): void {
    const namespace = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        uid: `namespace-${name}`,
        resourceVersion: '1',
        labels: { 'kubernetes.io/metadata.name': name },
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    if (verb === 'get') {
      if (!this.deps.namespaces.has(target.name ?? ''))
        throw notFound('namespaces', target.name ?? '', '', 'Namespace');
      return json(response, 200, namespace(target.name ?? ''));
    }
    if (verb === 'list')
      return json(response, 200, {
        kind: 'NamespaceList',
        apiVersion: 'v1',
        metadata: { resourceVersion: this.deps.store.currentRevision() },
        items: [...this.deps.namespaces].map(namespace),
      });
    throw methodNotAllowed();
  }

  private accessReview(response: http.ServerResponse, body: unknown): void {
    const review = body as {
      spec?: {
        resourceAttributes?: {
          namespace?: string;
          verb?: string;
          group?: string;
          resource?: string;
          subresource?: string;
          name?: string;
        };
      };
    };
    const attributes = review?.spec?.resourceAttributes;
    if (!attributes?.verb || !attributes.resource)
      throw invalid('SelfSubjectAccessReview', 'authorization.k8s.io', '', [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
          field: 'spec.resourceAttributes',
        },
      ]);
    const status = this.deps.authorizer.review({
      ...attributes,
      verb: attributes.verb,
      group: attributes.group ?? '',
      resource: attributes.resource,
    });
    json(response, 201, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: { creationTimestamp: null },
      spec: review.spec,
      status,
    });
  }
}
