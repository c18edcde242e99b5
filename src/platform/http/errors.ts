import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

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
  content_policy_violation: 'Content policy violation',
  resource_unavailable: 'Resource unavailable',
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

export const invalidRequest = (detail: string) => new ApiError(400, 'invalid_request', detail);
export const notFound = (detail: string) => new ApiError(404, 'resource_not_found', detail);
export const notAuthorized = (detail: string) => new ApiError(403, 'not_authorized', detail);
export const authenticationRequired = (detail: string) => new ApiError(401, 'authentication_required', detail);

export function renderProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string,
  error: ApiError,
): FastifyReply {
  const title = ERROR_CODES[error.code];
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/problem+json; charset=utf-8')
    .send({
      ...error.extensions,
      type: `${publicUrl}/errors/${error.code}`,
      title,
      status: error.status,
      detail: error.detail,
      instance: request.url.split('?')[0],
      error: `${title}: ${error.detail}`,
      error_code: error.code,
      retryable: error.retryable,
      trace_id: request.id,
    });
}

function describeValidation(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const params = first.params as Record<string, unknown>;
  const field =
    typeof params.missingProperty === 'string'
      ? `${first.instancePath}/${params.missingProperty}`
      : typeof params.additionalProperty === 'string'
        ? `${first.instancePath}/${params.additionalProperty}`
        : first.instancePath;
  const name = field.replace(/^\//, '').replace(/\//g, '.');
  if (typeof params.missingProperty === 'string') return `${where}: required field "${name}" is missing`;
  if (typeof params.additionalProperty === 'string') return `${where}: unknown field "${name}"`;
  return `${where}${name ? ` field "${name}"` : ''} ${first.message ?? 'is invalid'}`;
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
  if (BAD_VALUE_SQLSTATES.has(fastifyError?.code))
    return invalidRequest(`a value in the request is not accepted: ${fastifyError.message}`);
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'invalid_request', 'request body is larger than this server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'invalid_request', 'send the request body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest('the request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidRequest('the request body is not valid JSON');
  }
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (error instanceof SyntaxError) return invalidRequest('the request body is not valid JSON');
    return new ApiError(status, status === 404 ? 'resource_not_found' : 'invalid_request', fastifyError.message);
  }
  return new ApiError(500, 'internal_error', 'an internal error occurred; it has been logged with this trace id');
}
