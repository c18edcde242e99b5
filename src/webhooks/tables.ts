import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../platform/db/columns.js';

export type WebhookAuthMode = 'token' | 'url_token' | 'signature';

export interface WebhooksTable {
  uid: string;
  team_uid: string;
  factory_uid: string;
  name: string;
  auth_mode: WebhookAuthMode;
  signature_scheme: string | null;
  secret_iv: Buffer | null;
  secret_auth_tag: Buffer | null;
  secret_ciphertext: Buffer | null;
  secret_name: string | null;
  delivery_id_header: string | null;
  enabled: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DeliveryStatus =
  | 'Accepted'
  | 'Duplicate'
  | 'Rejected (auth)'
  | 'Rejected (invalid JSON)'
  | 'Rejected (too large)';

export interface WebhookDeliveriesTable {
  seq: ColumnType<string, never, never>;
  webhook_uid: string;
  delivery_id: string;
  status: DeliveryStatus;
  size_bytes: number;
  received_at: Timestamp;
  body: string | null;
  evaluated_at: NullableTimestamp;
  /** Signed deliveries: the hash of what the signature covers, which decides duplicates with delivery_id. */
  replay_key: string | null;
  /** An accepted signed delivery from before migration 0040 whose delivery_id an earlier one had (history). */
  identity_reused: Generated<boolean>;
}

export interface WebhookReplayKeysTable {
  webhook_uid: string;
  replay_key: string;
  first_seen_at: Timestamp;
  /** NULL: kept for good (schemes without a signed timestamp). */
  expires_at: NullableTimestamp;
}

export interface WebhookRateWindowsTable {
  webhook_uid: string;
  sender: string;
  kind: string;
  window_start: Timestamp;
  shard: number;
  count: number;
}

/** The webhooks slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface WebhooksTables {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_replay_keys: WebhookReplayKeysTable;
  webhook_rate_windows: WebhookRateWindowsTable;
}
