/**
 * The API server's error answers: a `Status` object (apiVersion v1) with the HTTP code, a machine-readable reason
 * and the message the API server words the same way, so a client's error handling meets what a cluster sends.
 */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[] };
  code: number;
}

/** An error a handler throws; the server answers it as its Status. */
export class StatusError extends Error {
  constructor(readonly status: KubeStatus) {
    super(status.message);
  }
}

function failure(code: number, reason: string, message: string, details?: KubeStatus['details']): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  });
}

/** `jobs.batch "run-1" not found` */
export function notFound(resource: string, name: string, group: string, kind: string): StatusError {
  return failure(404, 'NotFound', `${resource} "${name}" not found`, { name, group, kind: kind.toLowerCase() });
}

export function alreadyExists(resource: string, name: string, group: string, kind: string): StatusError {
  return failure(409, 'AlreadyExists', `${resource} "${name}" already exists`, {
    name,
    group,
    kind: kind.toLowerCase(),
  });
}

export function conflict(resource: string, name: string, group: string, kind: string): StatusError {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group, kind: kind.toLowerCase() },
  );
}

/** `Job.batch "x" is invalid: spec.template.spec.containers[0].image: Required value` */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): StatusError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const list = causes.map((cause) => (cause.field ? `${cause.field}: ${cause.message}` : cause.message));
  const message = `${qualifiedKind} "${name}" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`;
  return failure(422, 'Invalid', message, { name, group, kind, causes });
}

export function badRequest(message: string): StatusError {
  return failure(400, 'BadRequest', message);
}

export function methodNotAllowed(): StatusError {
  return failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function unauthorized(): StatusError {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/**
 * RBAC's refusal, worded as the API server words it:
 * `jobs.batch is forbidden: User "system:serviceaccount:hangar:hangar" cannot create resource "jobs" in API group
 * "batch" in the namespace "runs"`.
 */
export function forbidden(options: {
  user: string;
  verb: string;
  plural: string;
  subresource?: string;
  group: string;
  namespace?: string;
  name?: string;
}): StatusError {
  const resource = options.group ? `${options.plural}.${options.group}` : options.plural;
  const shown = options.subresource ? `${options.plural}/${options.subresource}` : options.plural;
  const where = options.namespace ? ` in the namespace "${options.namespace}"` : ' at the cluster scope';
  const named = options.name ? ` "${options.name}"` : '';
  return failure(
    403,
    'Forbidden',
    `${resource}${named} is forbidden: User "${options.user}" cannot ${options.verb} resource "${shown}" in API group "${options.group}"${where}`,
    { ...(options.name ? { name: options.name } : {}), group: options.group, kind: options.plural },
  );
}

/** What a watch from a compacted resourceVersion gets, as an ERROR event's object (and a list's 410 answer). */
export function gone(message = 'too old resource version'): StatusError {
  return failure(410, 'Expired', message);
}

export function success(details?: KubeStatus['details']): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    message: '',
    reason: '',
    ...(details ? { details } : {}),
    code: 200,
  };
}
