import { SECRET_NAME_PATTERN } from '../secrets/index.js';
import { SIGNATURE_SCHEME_NAMES } from '../webhooks/index.js';
import { Fields, readYamlMapping } from './definition-fields.js';
import type { DefinitionError, WebhookDefinition } from './definition-types.js';

/** `webhooks/<name>.yaml`: how a webhook authenticates its senders. Secrets themselves live in team secrets. */

const KEYS = ['authMode', 'signatureScheme', 'secretName', 'deliveryIdHeader', 'enabled'] as const;
const AUTH_MODES = ['token', 'url_token', 'signature'] as const;

/** RFC 9110 token, as the webhook API accepts for delivery_id_header. */
const HEADER = {
  regex: /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/,
  expected: "an HTTP header name of 1-100 letters, digits and !#$%&'*+.^_`|~- (no spaces or colons)",
};
const SECRET = {
  regex: new RegExp(SECRET_NAME_PATTERN),
  expected: 'a team secret name: 1-128 characters of A-Z a-z 0-9 _ . -, starting with a letter or _',
};

export function parseWebhook(
  file: string,
  name: string,
  text: string,
  errors: DefinitionError[],
): WebhookDefinition | null {
  const mapping = readYamlMapping(file, text, errors);
  if (!mapping) return null;
  const fields = new Fields(mapping, errors);
  fields.allowOnly(KEYS, 'a webhook file');

  const authMode = fields.choice('authMode', AUTH_MODES, 'token');
  const signatureScheme = fields.choice('signatureScheme', SIGNATURE_SCHEME_NAMES, null);
  // The scheme is what verifies a signature, so it goes with signature mode and nothing else.
  if (authMode === 'signature' && signatureScheme === null) {
    fields.fail(
      'authMode',
      `authMode signature needs a signatureScheme; add signatureScheme: one of ${SIGNATURE_SCHEME_NAMES.join(', ')}.`,
    );
  } else if (authMode !== 'signature' && authMode !== undefined && typeof signatureScheme === 'string') {
    fields.fail(
      'signatureScheme',
      `signatureScheme applies only to authMode signature; remove it or set authMode: signature.`,
    );
  }
  const secretName = fields.string('secretName', {
    required: "the name of the team secret that holds this webhook's token or signing secret",
    pattern: SECRET,
  });
  const deliveryIdHeader = fields.string('deliveryIdHeader', { pattern: HEADER });
  const enabled = fields.boolean('enabled', true);

  return {
    name,
    file,
    authMode: authMode ?? 'token',
    signatureScheme: signatureScheme ?? null,
    secretName: secretName ?? '',
    deliveryIdHeader: deliveryIdHeader ?? null,
    enabled: enabled ?? true,
    lines: mapping.lines,
  };
}
