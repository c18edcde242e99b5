/**
 * The resource types the Kubernetes API double serves, as the API server names them: the URL's group, version and
 * plural, the object's kind, its list's kind, and whether it lives in a namespace. One table, so routing, the store
 * and validation agree on every name.
 */
export interface ResourceType {
  /** '' for the core group (served under /api/v1), else the API group (served under /apis/GROUP/VERSION). */
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** The verbs a client may call over HTTP; status is written by the double's controllers only. */
  verbs: ReadonlyArray<'create' | 'get' | 'list' | 'watch' | 'delete' | 'patch' | 'update'>;
}

const all = ['create', 'get', 'list', 'watch', 'delete', 'patch', 'update'] as const;

export const RESOURCE_TYPES: readonly ResourceType[] = [
  { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, verbs: ['get', 'list'] },
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, verbs: all },
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true, verbs: all },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true, verbs: all },
  { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true, verbs: all },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
    verbs: all,
  },
];

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** `jobs.batch`, `pods`: how the API server names a resource in its messages (and RBAC in its refusals). */
export function qualifiedResource(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

export function resourceType(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((type) => type.group === group && type.version === version && type.plural === plural);
}

export function resourceTypeOfKind(kind: string): ResourceType {
  const type = RESOURCE_TYPES.find((candidate) => candidate.kind === kind);
  if (!type) throw new Error(`the Kubernetes double serves no kind ${kind}`);
  return type;
}
