import { type ResourceType, resourceType } from './resources.js';

/**
 * A request's target in the API server's URL scheme: `/api/v1/...` (the core group) or `/apis/GROUP/VERSION/...`,
 * then `namespaces/NS/PLURAL[/NAME[/SUBRESOURCE]]`, a cluster-wide `PLURAL[/NAME]`, or `namespaces[/NAME]`.
 */
export interface Target {
  group: string;
  version: string;
  plural: string;
  type: ResourceType | undefined;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function parseTarget(pathname: string): Target | undefined {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else return undefined;
  if (rest.length === 0) return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const [, namespace, plural, name, subresource] = rest as [string, string, string, string?, string?];
    if (rest.length > 5) return undefined;
    return { group, version, plural, type: resourceType(group, version, plural), namespace, name, subresource };
  }
  const [plural, name, subresource] = rest as [string, string?, string?];
  if (rest.length > 3) return undefined;
  return { group, version, plural, type: resourceType(group, version, plural), name, subresource };
}

/** The RBAC verb of a request on a target. */
export function verbOf(method: string, target: Target, watch: boolean): string {
  switch (method) {
    case 'GET':
      return target.name ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return target.name ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
