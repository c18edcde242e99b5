import { ERROR_CODES, type ErrorCode } from './errors.js';

/**
 * The documentation page of each error code: what every problem body's `type` points at
 * (`<public URL>/errors/<code>`). A person opening the link gets HTML; a client asking for JSON gets the same words.
 */
export const ERROR_DOCS: Record<ErrorCode, { status: number; meaning: string; remedy: string }> = {
  invalid_request: {
    status: 400,
    meaning: 'The request is malformed, misses a required field, or a value is out of range; `detail` names which.',
    remedy: 'Fix the request as `detail` says; sending it again unchanged gets the same answer.',
  },
  authentication_required: {
    status: 401,
    meaning: 'No valid API key came with the request (missing, unknown, malformed, expired or revoked).',
    remedy: 'Send `Authorization: Bearer <API key>` with a key of the team; `hangar keys create` makes one.',
  },
  not_authorized: {
    status: 403,
    meaning: 'The key is valid but its principal may not do this, or may not use something the request names.',
    remedy: 'Ask a team administrator for the role or the grant `detail` names, or use a key that has it.',
  },
  resource_not_found: {
    status: 404,
    meaning: "The resource does not exist, or is another team's (Hangar does not say which).",
    remedy: 'Check the ID and the team (`X-Team-Uid`).',
  },
  conflict: {
    status: 409,
    meaning:
      'The request conflicts with the current state of the resource (for example a cancel while a run is being prepared).',
    remedy: 'When `retryable` is true, try again in a moment; otherwise read the resource again first.',
  },
  operation_not_supported: {
    status: 422,
    meaning:
      'This resource cannot do this (a self-hosted run cannot be cancelled through the API, a transcript format has no conversation).',
    remedy: 'Use the operation `detail` points to, if any.',
  },
  feature_not_available: {
    status: 403,
    meaning: 'The feature is turned off on this server (for example metadata filtering).',
    remedy: 'Ask the operator to turn it on (docs/configuration.md names the setting).',
  },
  insufficient_credits: {
    status: 402,
    meaning: 'Hangar has no credits; the code exists for clients of the interface and is not answered.',
    remedy: 'None needed on Hangar: spend is limited by budgets (`budget_exceeded`).',
  },
  external_authentication_required: {
    status: 403,
    meaning: 'An integration needs the person behind the request to connect their own account first.',
    remedy: 'Open `auth_url` (the body names the `provider`) and connect the account, then send the request again.',
  },
  budget_exceeded: {
    status: 403,
    meaning: "The run's spend cap (`config.max_cost_usd`) or the team's monthly budget is reached.",
    remedy: 'Raise the cap or the budget (an administrator), or wait for the next month.',
  },
  integration_disabled: {
    status: 403,
    meaning: 'The integration the request needs is turned off for this team.',
    remedy: 'An administrator turns it on again.',
  },
  integration_not_configured: {
    status: 422,
    meaning: 'Something the request needs is not set up: a model with no key, a GitHub App not configured.',
    remedy: '`detail` names what to set; `hangar doctor` checks a setup.',
  },
  environment_setup_failed: {
    status: 422,
    meaning: "A run's environment could not be prepared: a clone or a setup command failed.",
    remedy:
      "Read the run's `failure_output`; a follow-up during the debug window starts a debug agent in the kept workspace.",
  },
  resource_limit_exceeded: {
    status: 429,
    meaning: 'A limit of the server or the team is reached (too many requests, webhooks, agents).',
    remedy: 'Wait for `Retry-After` when given, or remove what is no longer used.',
  },
  content_policy_violation: {
    status: 400,
    meaning: "A model provider refused the prompt or the run's content.",
    remedy: 'Change the prompt or the setup commands.',
  },
  resource_unavailable: {
    status: 503,
    meaning: 'A transient failure: the database is unreachable or shutting down, or a dependency does not answer.',
    remedy: 'Retry after `Retry-After`; nothing acknowledged was lost.',
  },
  idempotency_key_reused: {
    status: 422,
    meaning: 'The `Idempotency-Key` was used within 24 hours for a different request.',
    remedy: 'Use a new key for a new request; resend the first request unchanged to get its answer.',
  },
  internal_error: {
    status: 500,
    meaning: 'A bug in Hangar: it was logged with the `trace_id` of the answer.',
    remedy: 'Retry; report the `trace_id` to the operator if it persists.',
  },
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The page for a person: the code, its usual status, what it means and what to do. */
export function errorPage(code: ErrorCode): string {
  const doc = ERROR_DOCS[code];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(code)}: ${escapeHtml(ERROR_CODES[code])}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1><code>${escapeHtml(code)}</code>: ${escapeHtml(ERROR_CODES[code])}</h1>
<p>Usual HTTP status: ${doc.status}.</p>
<h2>What it means</h2><p>${inline(doc.meaning)}</p>
<h2>What to do</h2><p>${inline(doc.remedy)}</p>
<p><a href="/errors">Every error code</a> · <a href="/docs">API reference</a></p>
</body></html>`;
}

/** The index of every code's page. */
export function errorIndexPage(): string {
  const items = Object.keys(ERROR_DOCS)
    .map(
      (code) =>
        `<li><a href="/errors/${code}"><code>${code}</code></a>: ${escapeHtml(ERROR_CODES[code as ErrorCode])}</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hangar error codes</title></head>
<body>
<h1>Error codes</h1><p>Every problem body's <code>type</code> links to its code's page.</p><ul>${items}</ul>
</body></html>`;
}
