import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/sql-state.js';
import { describeValidation } from './validation-message.js';

/** Every error code the interface names, with the title shown in problem+json bodies and on /errors/<code>. */
export const ERROR_CODES = {
  invalid_request: 'Invalid request',
  authentication_required: 'Authentication required',
  not_authorized: 'Not authorized',
  resource_not_found: 'Resource not found',
  conflict: 'Conflict',
  operation_not_supported: 'Operation not supported',
  feature_not_available: 'Feature not available',
  insufficient_credits: 'Insufficient credits',
  external_authentication_required: 'External authentication required',
  budget_exceeded: 'Budget exceeded',
  integration_disabled: 'Integration disabled',
  integration_not_configured: 'Integration not configured',
  environment_setup_failed: 'Environment setup failed',
  resource_limit_exceeded: 'Resource limit exceeded',
  content_policy_violation: 'Content policy violation',
  resource_unavailable: 'Resource unavailable',
  idempotency_key_reused: 'Idempotency key reused',
  internal_error: 'Internal error',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Platform errors are worth retrying; user errors are not (unless the caller says otherwise). */
const RETRYABLE_BY_DEFAULT = new Set<ErrorCode>(['resource_unavailable', 'internal_error']);

/** The one error type: anything thrown with it is rendered as problem+json with its status and code. */
export class ApiError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    options: { retryable?: boolean; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(code);
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
  readonly headers: Record<string, string>;
  /** Extra members of the problem body (RFC 9457 extensions), e.g. every problem found in a definition. */
  readonly extensions: Record<string, unknown>;
}

// The catalogue: one constructor per error the interface gives, so a status and its code are chosen in one place.

/** 400: the request is at fault; `extensions` lists every problem found when there are several. */
export const invalidRequest = (detail: string, extensions?: Record<string, unknown>) =>
  new ApiError(400, 'invalid_request', detail, { extensions });
/** 413: the body is larger than the route accepts. */
export const payloadTooLarge = (detail: string) => new ApiError(413, 'invalid_request', detail);
/** 415: the body is not in a media type the route reads. */
export const unsupportedMediaType = (detail: string) => new ApiError(415, 'invalid_request', detail);
/** 405, with the Allow header the HTTP specification requires. */
export const methodNotAllowed = (detail: string, allow: string) =>
  new ApiError(405, 'invalid_request', detail, { headers: { allow } });
/** 426: the route speaks another protocol (a websocket); the Upgrade header names it, as HTTP requires. */
export const upgradeRequired = (detail: string, protocol: string) =>
  new ApiError(426, 'invalid_request', detail, { headers: { upgrade: protocol, connection: 'Upgrade' } });
export const authenticationRequired = (detail: string) => new ApiError(401, 'authentication_required', detail);
export const notAuthorized = (detail: string) => new ApiError(403, 'not_authorized', detail);
export const featureNotAvailable = (detail: string) => new ApiError(403, 'feature_not_available', detail);
/** 403: the team's monthly budget is spent; the detail says how much and who can raise it. */
export const budgetExceeded = (detail: string) => new ApiError(403, 'budget_exceeded', detail);
export const integrationDisabled = (detail: string) => new ApiError(403, 'integration_disabled', detail);
export const notFound = (detail: string) => new ApiError(404, 'resource_not_found', detail);
/** 409: the state of a resource refuses the request; `retryable` when the state is about to change by itself. */
export const conflict = (detail: string, options: { retryable?: boolean } = {}) =>
  new ApiError(409, 'conflict', detail, options);
export const operationNotSupported = (detail: string) => new ApiError(422, 'operation_not_supported', detail);
/** 422: an Idempotency-Key sent again with a different request than the one it was first used for. */
export const idempotencyKeyReused = (detail: string) => new ApiError(422, 'idempotency_key_reused', detail);
export const integrationNotConfigured = (detail: string) => new ApiError(422, 'integration_not_configured', detail);
/** 429 with Retry-After: a rate limit the caller may retry after that many seconds. */
export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new ApiError(429, 'resource_unavailable', detail, {
    retryable: true,
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
/** 502: a server Hangar forwards to (a model provider, an MCP server) could not be reached. */
export const upstreamUnreachable = (detail: string) => new ApiError(502, 'resource_unavailable', detail);
/** Seconds a client is asked to wait before retrying while the database is unavailable (a restart takes a few). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;
/**
 * 503: the database could not be reached or dropped the connection (a restart, a failover, a full pool). The
 * request failed for the database, not for what it asked: the caller retries it after Retry-After.
 */
export const databaseUnavailable = () =>
  new ApiError(503, 'resource_unavailable', 'the database is unavailable for a moment; retry this request', {
    retryable: true,
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
/** 500: the details go to the log under the trace id, never to the caller. */
export const internalError = () =>
  new ApiError(500, 'internal_error', 'an internal error occurred; it has been logged with this trace id');

/**
 * A refusal another Hangar answered with (problem+json), raised again here with its status, code and detail;
 * a code this server does not know is kept as the caller saw it.
 */
export const relayedProblem = (status: number, code: string | undefined, detail: string) =>
  new ApiError(status, (code ?? 'invalid_request') as ErrorCode, detail);

export function renderProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string,
  error: ApiError,
): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/problem+json; charset=utf-8')
    .send(problemBody(error, { publicUrl, instance: request.url.split('?')[0]!, traceId: request.id }));
}

/** The problem+json body of an error: also written by hand where no reply exists (a request HTTP could not parse). */
export function problemBody(
  error: ApiError,
  where: { publicUrl: string; instance: string; traceId: string },
): Record<string, unknown> {
  const title = ERROR_CODES[error.code];
  return {
    ...error.extensions,
    type: `${where.publicUrl}/errors/${error.code}`,
    title,
    status: error.status,
    detail: error.detail,
    instance: where.instance,
    error: `${title}: ${error.detail}`,
    error_code: error.code,
    retryable: error.retryable,
    trace_id: where.traceId,
  };
}

/**
 * PostgreSQL data exceptions that only a client-supplied value can cause: a NUL character in text (22021) or
 * JSON (22P05), JSON the database refuses such as an unpaired surrogate (22P02), a date-time the schema's format
 * allows but PostgreSQL cannot represent (22007, 22008, 22009). The request is at fault, not the server.
 */
const BAD_VALUE_SQLSTATES = new Set(['22021', '22P05', '22P02', '22007', '22008', '22009']);

/** Maps whatever a route or Fastify itself threw onto the one ApiError shape. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) return invalidRequest(describeValidation(fastifyError));
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  if (BAD_VALUE_SQLSTATES.has(fastifyError?.code))
    return invalidRequest(`a value in the request is not accepted: ${fastifyError.message}`);
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge('request body is larger than this server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType('send the request body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest('the request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidRequest('the request body is not valid JSON');
  }
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (error instanceof SyntaxError) return invalidRequest('the request body is not valid JSON');
    // Fastify's own 4xx (e.g. 404 from a plugin): its status is kept, under the code that fits it.
    return new ApiError(status, status === 404 ? 'resource_not_found' : 'invalid_request', fastifyError.message);
  }
  return internalError();
}
