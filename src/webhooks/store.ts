import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../database.js';
import type { SealedValue } from '../platform/crypto.js';
import type { DeliveryStatus, WebhookAuthMode, WebhooksTable } from './tables.js';

export type WebhookRow = Selectable<WebhooksTable>;

/** NOTIFY channel that wakes the automation evaluators when a delivery was accepted. */
export const DELIVERIES_CHANNEL = 'hangar_deliveries';

export interface WebhookValues {
  name: string;
  auth_mode: WebhookAuthMode;
  signature_scheme: string | null;
  secret_name: string | null;
  delivery_id_header: string | null;
  enabled: boolean;
}

export function valuesOf(row: WebhookRow): WebhookValues {
  const { name, auth_mode, signature_scheme, secret_name, delivery_id_header, enabled } = row;
  return { name, auth_mode, signature_scheme, secret_name, delivery_id_header, enabled };
}

function sealedColumns(sealed: SealedValue | null) {
  return sealed
    ? { secret_iv: sealed.iv, secret_auth_tag: sealed.authTag, secret_ciphertext: sealed.ciphertext }
    : { secret_iv: null, secret_auth_tag: null, secret_ciphertext: null };
}

export function sealedSecret(row: WebhookRow): SealedValue | null {
  if (!row.secret_iv || !row.secret_auth_tag || !row.secret_ciphertext) return null;
  return { iv: row.secret_iv, authTag: row.secret_auth_tag, ciphertext: row.secret_ciphertext };
}

export async function listWebhooks(db: Kysely<DB>, teamUid: string, factoryUid?: string): Promise<WebhookRow[]> {
  let query = db.selectFrom('webhooks').selectAll().where('team_uid', '=', teamUid);
  if (factoryUid !== undefined) query = query.where('factory_uid', '=', factoryUid);
  return query.orderBy(sql`name COLLATE "C"`).orderBy('uid').execute();
}

export async function findWebhook(db: Kysely<DB>, teamUid: string, uid: string): Promise<WebhookRow | undefined> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
}

export async function countWebhooks(db: Kysely<DB>, factoryUid: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('factory_uid', '=', factoryUid)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWebhook(
  db: Kysely<DB>,
  row: WebhookValues & { uid: string; team_uid: string; factory_uid: string },
  sealed: SealedValue | null,
): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({ ...row, ...sealedColumns(sealed) })
    .execute();
}

/** `sealed`: undefined keeps the secret, null drops the webhook's own (a team secret is named instead). */
export async function updateWebhook(
  db: Kysely<DB>,
  teamUid: string,
  uid: string,
  values: WebhookValues,
  sealed: SealedValue | null | undefined,
): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ ...values, ...(sealed === undefined ? {} : sealedColumns(sealed)), updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteWebhook(db: Kysely<DB>, teamUid: string, uid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhooks')
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface DeliveryRow {
  seq: string;
  delivery_id: string;
  status: DeliveryStatus;
  size_bytes: number;
  received_at: Date;
  evaluated_at: Date | null;
}

export interface NewDelivery {
  webhookUid: string;
  /** The delivery's identity (the sender's ID, or the body's hash): shown in the log; one accepted delivery each. */
  deliveryId: string;
  /** Signed deliveries: what their signature covers (the scheme's replay key); one accepted delivery each too. */
  replayKey: string | null;
  /** How long the replay key is kept, in days; null for good (schemes without a signed timestamp). */
  replayKeyDays: number | null;
  body: string;
  sizeBytes: number;
}

/**
 * Records deliveries that passed every check, in one statement for a batch: each one `Accepted`, or a
 * `Duplicate` when its identity or its event was accepted before, earlier in the batch included. Every delivery's
 * identity (its delivery ID) is held by the unique index on accepted rows, as the interface says. A signed
 * delivery must also bring a new event: its replay key, claimed in webhook_replay_keys first (an expired claim is
 * taken over), so a captured delivery under a fresh ID is a Duplicate and takes no ID. A signed delivery whose ID
 * is already taken claims no key, so its event still counts under an ID of its own later (only one arriving at the
 * same moment as the ID's first delivery, in another transaction, can lose its key). Unique keys decide, so
 * concurrent deliveries of one identity or one event yield exactly one Accepted.
 */
export async function recordAccepted(db: Kysely<DB>, deliveries: NewDelivery[]): Promise<DeliveryStatus[]> {
  const input = deliveries.map((delivery, pos) => ({
    pos,
    uid: delivery.webhookUid,
    delivery_id: delivery.deliveryId,
    replay_key: delivery.replayKey,
    replay_days: delivery.replayKeyDays,
    body: delivery.body,
    size: delivery.sizeBytes,
  }));
  const result = await sql<{ pos: number }>`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
        AS i(pos int, uid text, delivery_id text, replay_key text, replay_days int, body text, size int)
    ),
    signed_new AS (
      SELECT DISTINCT ON (uid, replay_key) * FROM input i
      WHERE replay_key IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.webhook_uid = i.uid AND d.delivery_id = i.delivery_id AND d.status = 'Accepted' AND NOT d.identity_reused
      )
      ORDER BY uid, replay_key, pos
    ),
    signed_first AS (SELECT DISTINCT ON (uid, delivery_id) * FROM signed_new ORDER BY uid, delivery_id, pos),
    claimed AS (
      INSERT INTO webhook_replay_keys AS k (webhook_uid, replay_key, expires_at)
      SELECT uid, replay_key, clock_timestamp() + make_interval(days => replay_days) FROM signed_first ORDER BY pos
      ON CONFLICT (webhook_uid, replay_key) DO UPDATE SET first_seen_at = clock_timestamp(), expires_at = EXCLUDED.expires_at
        WHERE k.expires_at < clock_timestamp()
      RETURNING webhook_uid, replay_key
    ),
    unsigned_first AS (SELECT DISTINCT ON (uid, delivery_id) * FROM input WHERE replay_key IS NULL ORDER BY uid, delivery_id, pos),
    candidates AS (
      SELECT f.* FROM signed_first f JOIN claimed c ON c.webhook_uid = f.uid AND c.replay_key = f.replay_key
      UNION ALL
      SELECT * FROM unsigned_first
    ),
    accepted AS (
      INSERT INTO webhook_deliveries (webhook_uid, delivery_id, replay_key, status, size_bytes, body)
      SELECT uid, delivery_id, replay_key, 'Accepted', size, body FROM candidates ORDER BY pos
      ON CONFLICT (webhook_uid, delivery_id) WHERE status = 'Accepted' AND NOT identity_reused DO NOTHING
      RETURNING webhook_uid, delivery_id, replay_key
    ),
    accepted_pos AS (
      SELECT c.pos FROM candidates c
      JOIN accepted a ON a.webhook_uid = c.uid AND a.delivery_id = c.delivery_id AND a.replay_key IS NOT DISTINCT FROM c.replay_key
    ),
    duplicates AS (
      INSERT INTO webhook_deliveries (webhook_uid, delivery_id, replay_key, status, size_bytes)
      SELECT uid, delivery_id, replay_key, 'Duplicate', size FROM input WHERE pos NOT IN (SELECT pos FROM accepted_pos) ORDER BY pos
    )
    SELECT pos FROM accepted_pos`.execute(db);
  const accepted = new Set(result.rows.map((row) => Number(row.pos)));
  return deliveries.map((_, pos) => (accepted.has(pos) ? 'Accepted' : 'Duplicate'));
}

/** Replay keys of timestamped schemes past their keeping time (the others are kept for good). */
export async function pruneReplayKeys(db: Kysely<DB>): Promise<number> {
  const result = await db
    .deleteFrom('webhook_replay_keys')
    .where('expires_at', '<', sql<Date>`clock_timestamp()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Duplicates and rejections keep metadata only. */
export async function recordRejected(
  db: Kysely<DB>,
  webhookUid: string,
  deliveryId: string,
  status: DeliveryStatus,
  sizeBytes: number,
): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({ webhook_uid: webhookUid, delivery_id: deliveryId, status, size_bytes: sizeBytes })
    .execute();
}

const deliveryColumns = ['seq', 'delivery_id', 'status', 'size_bytes', 'received_at', 'evaluated_at'] as const;

/** Newest first, `limit` rows with seq below `beforeSeq`. */
export async function listDeliveries(
  db: Kysely<DB>,
  webhookUid: string,
  limit: number,
  beforeSeq?: string,
): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').select(deliveryColumns).where('webhook_uid', '=', webhookUid);
  if (beforeSeq !== undefined) query = query.where('seq', '<', beforeSeq as never);
  return query.orderBy('seq', 'desc').limit(limit).execute();
}

/** A delivery by its ID: the accepted one when there is one (duplicates share its ID), else the latest. */
export async function findDelivery(
  db: Kysely<DB>,
  webhookUid: string,
  deliveryId: string,
): Promise<(DeliveryRow & { body: string | null }) | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .select([...deliveryColumns, 'body'])
    .where('webhook_uid', '=', webhookUid)
    .where('delivery_id', '=', deliveryId)
    .orderBy(sql`status = 'Accepted'`, 'desc')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function firingsOf(db: Kysely<DB>, deliverySeq: string) {
  return db
    .selectFrom('automation_firings')
    .select(['automation_id', 'run_id', 'error'])
    .where('delivery_seq', '=', deliverySeq)
    .orderBy('automation_id')
    .execute();
}

/**
 * Trims each webhook's log to what retention promises: the latest `keep` deliveries, and everything younger
 * than `maxAgeDays`, are kept. Accepted deliveries still waiting for the evaluator are never removed.
 */
export async function pruneDeliveries(db: Kysely<DB>, keep: number, maxAgeDays: number): Promise<number> {
  const result = await sql`
    DELETE FROM webhook_deliveries d
    WHERE d.received_at < clock_timestamp() - make_interval(days => ${maxAgeDays})
      AND NOT (d.status = 'Accepted' AND d.evaluated_at IS NULL)
      AND d.seq < (
        SELECT coalesce(min(k.seq), 0) FROM (
          SELECT seq FROM webhook_deliveries l WHERE l.webhook_uid = d.webhook_uid ORDER BY seq DESC LIMIT ${keep}
        ) k
      )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export interface PendingDelivery {
  seq: string;
  webhook_uid: string;
  delivery_id: string;
  body: string;
  team_uid: string;
  webhook_name: string;
}

/**
 * Locks up to `limit` accepted deliveries not yet evaluated, oldest first, skipping those another evaluator
 * holds. Deliveries of a webhook deleted meanwhile are gone with it (they stop firing).
 */
export async function claimPending(db: Kysely<DB>, limit: number): Promise<PendingDelivery[]> {
  const result = await sql<PendingDelivery>`
    SELECT d.seq, d.webhook_uid, d.delivery_id, d.body, w.team_uid, w.name AS webhook_name
    FROM webhook_deliveries d JOIN webhooks w ON w.uid = d.webhook_uid
    WHERE d.status = 'Accepted' AND d.evaluated_at IS NULL
    ORDER BY d.seq LIMIT ${limit}
    FOR UPDATE OF d SKIP LOCKED`.execute(db);
  return result.rows;
}

export async function markEvaluated(db: Kysely<DB>, seqs: string[]): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ evaluated_at: sql`clock_timestamp()` })
    .where('seq', 'in', seqs as never[])
    .execute();
}

/** Whether any accepted delivery waits for evaluation (to sleep only when there is none). */
export async function hasPending(db: Kysely<DB>): Promise<boolean> {
  const row = await sql<{
    seq: string;
  }>`SELECT seq FROM webhook_deliveries WHERE status = 'Accepted' AND evaluated_at IS NULL LIMIT 1`.execute(db);
  return row.rows.length > 0;
}

export async function webhooksByUid(
  db: Kysely<DB>,
  teamUid: string,
  uids: string[],
): Promise<Map<string, { name: string; enabled: boolean }>> {
  if (uids.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhooks')
    .select(['uid', 'name', 'enabled'])
    .where('team_uid', '=', teamUid)
    .where('uid', 'in', uids)
    .execute();
  return new Map(rows.map((row) => [row.uid, { name: row.name, enabled: row.enabled }]));
}

/**
 * Claims a replay key outside any team webhook (`scope` names the receiver, e.g. the GitHub App's webhook): true
 * the first time, false for a replay. Keys without `days` are kept for good.
 */
export async function claimReplayKey(
  db: Kysely<DB>,
  scope: string,
  replayKey: string,
  days: number | null,
): Promise<boolean> {
  const expiry = days === null ? null : sql<Date>`clock_timestamp() + make_interval(days => ${days})`;
  const row = await db
    .insertInto('webhook_replay_keys')
    .values({ webhook_uid: scope, replay_key: replayKey, expires_at: expiry })
    .onConflict((oc) =>
      oc
        .columns(['webhook_uid', 'replay_key'])
        .doUpdateSet({ first_seen_at: sql`clock_timestamp()`, expires_at: expiry })
        .where('webhook_replay_keys.expires_at', '<', sql<Date>`clock_timestamp()`),
    )
    .returning('replay_key')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives back a key claimed in the same transaction (the delivery it stood for started nothing). */
export async function releaseReplayKey(db: Kysely<DB>, scope: string, replayKey: string): Promise<void> {
  await db
    .deleteFrom('webhook_replay_keys')
    .where('webhook_uid', '=', scope)
    .where('replay_key', '=', replayKey)
    .execute();
}

/** The webhook and delivery ID of logged deliveries, by sequence number (an automation's firings name them). */
export async function deliveriesBySeq(
  db: Kysely<DB>,
  seqs: readonly string[],
): Promise<Map<string, { webhook_uid: string; delivery_id: string }>> {
  if (seqs.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['seq', 'webhook_uid', 'delivery_id'])
    .where('seq', 'in', [...seqs])
    .execute();
  return new Map(rows.map((row) => [String(row.seq), { webhook_uid: row.webhook_uid, delivery_id: row.delivery_id }]));
}
