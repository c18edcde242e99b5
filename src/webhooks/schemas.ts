import { type Static, type TSchema, Type } from 'typebox';
import { PATTERN_IN_WORDS } from '../platform/http/validation-message.js';
import { SecretName } from '../secrets/index.js';
import { SIGNATURE_SCHEME_NAMES } from './schemes/names.js';

/** Wire schemas of the webhook management API (/api/v1/factory/webhooks). */

export const MAX_WEBHOOKS_PER_FACTORY = 20;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Name = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'Shown in the automation editor; unique in its factory',
});
const AuthMode = Type.Union([Type.Literal('token'), Type.Literal('url_token'), Type.Literal('signature')], {
  description:
    'token (default): bearer token; url_token: the token is part of the URL; signature: the provider signs each delivery',
});
const Scheme = Type.Union(
  SIGNATURE_SCHEME_NAMES.map((name) => Type.Literal(name)),
  { description: 'The provider scheme, with auth_mode signature' },
);
/** An HTTP header name (RFC 9110 token). */
const HeaderName = Type.String({
  pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$",
  [PATTERN_IN_WORDS]: "an HTTP header name: 1-100 letters, digits or any of !#$%&'*+.^_`|~-",
  description: 'A header the sender stamps its own event ID into',
});
const Secret = Type.String({
  minLength: 8,
  maxLength: 1024,
  description: "The provider's signing secret (signature mode); write-only",
});

export const CreateWebhookBody = Type.Object(
  {
    name: Name,
    factory_uid: Type.Optional(Type.String({ maxLength: 64, description: "Default: the team's default factory" })),
    auth_mode: Type.Optional(AuthMode),
    signature_scheme: Type.Optional(Nullable(Scheme)),
    secret: Type.Optional(Nullable(Secret)),
    secret_name: Type.Optional(Nullable(SecretName)),
    delivery_id_header: Type.Optional(Nullable(HeaderName)),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

/** Omitted fields stay as they are; null clears an optional one. */
export const UpdateWebhookBody = Type.Object(
  {
    name: Type.Optional(Name),
    auth_mode: Type.Optional(AuthMode),
    signature_scheme: Type.Optional(Nullable(Scheme)),
    secret: Type.Optional(Nullable(Secret)),
    secret_name: Type.Optional(Nullable(SecretName)),
    delivery_id_header: Type.Optional(Nullable(HeaderName)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const RotateWebhookBody = Type.Union([
  Type.Object({ secret: Type.Optional(Secret) }, { additionalProperties: false }),
  Type.Null(),
]);
export type RotateWebhookBody = Static<typeof RotateWebhookBody>;

export const WebhookUidParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64 }) });
export const DeliveryParams = Type.Object({
  uid: Type.String({ minLength: 1, maxLength: 64 }),
  delivery_id: Type.String({ minLength: 1, maxLength: 300 }),
});
export const ListWebhooksQuery = Type.Object({ factory_uid: Type.Optional(Type.String({ maxLength: 64 })) });
export const ListDeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 500 })),
});

export const WebhookItem = Type.Object({
  uid: Type.String(),
  name: Type.String(),
  factory_uid: Type.String(),
  auth_mode: Type.String(),
  signature_scheme: Type.Union([Type.String(), Type.Null()]),
  secret_name: Type.Union([Type.String(), Type.Null()]),
  delivery_id_header: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  url: Type.String({
    description:
      'Where senders POST; for url_token it shows a {token} placeholder except right after creation or rotation',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  secret: Type.Optional(
    Type.String({ description: 'Only in the responses that issue a secret (create, rotate): shown once' }),
  ),
});
export type WebhookItem = Static<typeof WebhookItem>;

export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookItem, { description: 'Sorted by name' }) });

const Firing = Type.Object({
  automation_id: Type.String(),
  run_id: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DeliveryItem = Type.Object({
  delivery_id: Type.String(),
  status: Type.Union([
    Type.Literal('Accepted'),
    Type.Literal('Duplicate'),
    Type.Literal('Rejected (auth)'),
    Type.Literal('Rejected (invalid JSON)'),
    Type.Literal('Rejected (too large)'),
  ]),
  size_bytes: Type.Integer(),
  received_at: Type.String({ format: 'date-time' }),
  payload: Type.Optional(
    Type.Unknown({ description: 'The JSON body (accepted deliveries, in the single-delivery view)' }),
  ),
  evaluated_at: Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Accepted deliveries: when the automations were evaluated (null: not yet)',
    }),
  ),
  runs: Type.Optional(
    Type.Array(Firing, { description: 'Accepted deliveries: what each matching automation started' }),
  ),
});
export type DeliveryItem = Static<typeof DeliveryItem>;

export const DeliveryList = Type.Object({
  deliveries: Type.Array(DeliveryItem, { description: 'Newest first' }),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
