import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { newUid, type SealedValue } from '../platform/crypto.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { conflict, invalidRequest, notFound } from '../platform/http/errors.js';
import { type CursorCodec, InvalidCursorError } from '../platform/http/pagination.js';
import { rfc3339 } from '../platform/time.js';
import { authProblem, issueSecret, isUrlSafe, openWebhookSecret, sealWebhookSecret } from './credentials.js';
import {
  type CreateWebhookBody,
  type DeliveryItem,
  MAX_WEBHOOKS_PER_FACTORY,
  type UpdateWebhookBody,
  type WebhookItem,
} from './schemas.js';
import * as store from './store.js';

/** What the webhooks slice needs from team secrets. */
export interface SecretReader {
  missingSecrets(teamUid: string, names: string[]): Promise<string[]>;
  readSecretValue(teamUid: string, name: string): Promise<string | null>;
}

/**
 * What webhooks (and automations) need from the factories that contain them; the factory slice implements it, and
 * builds on this slice, so it cannot be imported from here.
 */
export interface FactoryDirectory {
  /** Throws 403 unless the caller may manage the factory's contents. */
  requireManager(caller: Caller): void;
  /** The factory named, or the team's default one (404 when the one named does not exist). */
  resolve(db: Kysely<DB>, teamUid: string, factoryUid: string | undefined): Promise<{ uid: string; name: string }>;
  /** Holds the factory until the transaction ends. */
  lock(db: Kysely<DB>, uid: string): Promise<void>;
}

export interface WebhooksServiceOptions {
  db: Kysely<DB>;
  factories: FactoryDirectory;
  secrets: SecretReader;
  /** AES-256 key that seals webhooks' own secrets (the one that seals team secrets). */
  key: Buffer;
  /** `{app_url}`: where senders reach the ingress (known once the server listens). */
  appUrl: () => string;
  cursors: CursorCodec;
}

const DELIVERY_ORDERING = 'deliveries:seq:desc';
/** A webhook's name is unique in its factory: a create or rename onto a taken name fails on this constraint. */
const NAME_CONSTRAINT = 'webhooks_factory_uid_name_key';

/** Webhook management: create, edit, rotate, delete, and the delivery log. */
export class WebhooksService {
  constructor(private readonly options: WebhooksServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  /** The ingress URL; for url_token the token is shown only when just issued. */
  url(row: Pick<store.WebhookRow, 'uid' | 'auth_mode'>, issuedSecret?: string): string {
    const base = `${this.options.appUrl()}/webhooks/w/${row.uid}`;
    return row.auth_mode === 'url_token' ? `${base}/${issuedSecret ?? '{token}'}` : base;
  }

  private render(row: store.WebhookRow, issuedSecret?: string): WebhookItem {
    return {
      uid: row.uid,
      name: row.name,
      factory_uid: row.factory_uid,
      auth_mode: row.auth_mode,
      signature_scheme: row.signature_scheme,
      secret_name: row.secret_name,
      delivery_id_header: row.delivery_id_header,
      enabled: row.enabled,
      url: this.url(row, issuedSecret),
      created_at: rfc3339(row.created_at),
      updated_at: rfc3339(row.updated_at),
      ...(issuedSecret !== undefined ? { secret: issuedSecret } : {}),
    };
  }

  private async load(teamUid: string, uid: string): Promise<store.WebhookRow> {
    const row = await store.findWebhook(this.db, teamUid, uid);
    if (!row) throw notFound(`webhook ${uid} not found`);
    return row;
  }

  /** The credential senders must present: the webhook's own secret or the team secret it names. */
  async credentialOf(row: store.WebhookRow): Promise<string | null> {
    if (row.secret_name !== null) return this.options.secrets.readSecretValue(row.team_uid, row.secret_name);
    const sealed = store.sealedSecret(row);
    return sealed ? openWebhookSecret(this.options.key, row.uid, sealed) : null;
  }

  /** A team secret named as the credential must exist, and be usable in a URL for url_token. */
  async checkSecretName(teamUid: string, name: string, mode: string): Promise<void> {
    if ((await this.options.secrets.missingSecrets(teamUid, [name])).length > 0) {
      throw invalidRequest(
        `secret_name ${name} does not name a secret of this team; create it first with \`hangar secrets set ${name}\` (POST /secrets)`,
      );
    }
    if (mode === 'url_token' && !isUrlSafe((await this.options.secrets.readSecretValue(teamUid, name)) ?? '')) {
      throw invalidRequest(`the value of secret ${name} cannot be a url_token: it must use only A-Z a-z 0-9 - . _ ~`);
    }
  }

  /** The webhooks of a factory, for a definition's apply (inside its transaction `db`). */
  inFactory(db: Kysely<DB>, teamUid: string, factoryUid: string): Promise<store.WebhookRow[]> {
    return store.listWebhooks(db, teamUid, factoryUid);
  }

  /**
   * Creates or changes a webhook a definition manages, inside its transaction: its credential is always the
   * named team secret (checked beforehand with checkSecretName). Returns the UID.
   */
  async saveManaged(
    db: Kysely<DB>,
    teamUid: string,
    factoryUid: string,
    existing: store.WebhookRow | undefined,
    values: store.WebhookValues,
  ): Promise<string> {
    if (existing) {
      await store.updateWebhook(db, teamUid, existing.uid, values, null);
      return existing.uid;
    }
    const uid = newUid();
    await store.insertWebhook(db, { ...values, uid, team_uid: teamUid, factory_uid: factoryUid }, null);
    return uid;
  }

  async deleteManaged(db: Kysely<DB>, teamUid: string, uid: string): Promise<void> {
    await store.deleteWebhook(db, teamUid, uid);
  }

  async list(caller: Caller, factoryUid?: string): Promise<{ webhooks: WebhookItem[] }> {
    return { webhooks: (await store.listWebhooks(this.db, caller.teamUid, factoryUid)).map((row) => this.render(row)) };
  }

  async get(caller: Caller, uid: string): Promise<WebhookItem> {
    return this.render(await this.load(caller.teamUid, uid));
  }

  async create(caller: Caller, body: CreateWebhookBody): Promise<WebhookItem> {
    this.options.factories.requireManager(caller);
    const name = body.name.trim();
    if (name === '') throw invalidRequest('name must not be blank');
    const mode = body.auth_mode ?? 'token';
    const scheme = body.signature_scheme ?? null;
    const problem = authProblem(mode, scheme);
    if (problem) throw invalidRequest(problem);
    const secretName = body.secret_name ?? null;
    if (secretName !== null) {
      if (body.secret) throw invalidRequest('give either secret or secret_name, not both');
      await this.checkSecretName(caller.teamUid, secretName, mode);
    }
    const secret = secretName === null ? issueSecret(mode, scheme, body.secret) : undefined;
    const uid = newUid();
    await this.db.transaction().execute(async (trx) => {
      const factory = await this.options.factories.resolve(trx, caller.teamUid, body.factory_uid);
      // One creation at a time per factory, so that the limit holds under concurrent requests.
      await this.options.factories.lock(trx, factory.uid);
      if ((await store.countWebhooks(trx, factory.uid)) >= MAX_WEBHOOKS_PER_FACTORY) {
        throw invalidRequest(
          `a factory holds at most ${MAX_WEBHOOKS_PER_FACTORY} webhooks; delete one or use another factory`,
        );
      }
      await withConflicts(
        store.insertWebhook(
          trx,
          {
            uid,
            team_uid: caller.teamUid,
            factory_uid: factory.uid,
            name,
            auth_mode: mode,
            signature_scheme: scheme,
            secret_name: secretName,
            delivery_id_header: body.delivery_id_header ?? null,
            enabled: body.enabled ?? true,
          },
          secret === undefined ? null : sealWebhookSecret(this.options.key, uid, secret),
        ),
        { [NAME_CONSTRAINT]: () => conflict(`factory ${factory.name} already has a webhook named ${name}`) },
      );
    });
    return this.render(await this.load(caller.teamUid, uid), secret);
  }

  /**
   * Changes what the body names. Changing how senders authenticate (mode or scheme) of a webhook with its own
   * secret issues a new one, shown once in the response; so does dropping secret_name.
   */
  async update(caller: Caller, uid: string, body: UpdateWebhookBody): Promise<WebhookItem> {
    this.options.factories.requireManager(caller);
    const row = await this.load(caller.teamUid, uid);
    const name = body.name?.trim() ?? row.name;
    if (name === '') throw invalidRequest('name must not be blank');
    const mode = body.auth_mode ?? row.auth_mode;
    let scheme = body.signature_scheme === undefined ? row.signature_scheme : body.signature_scheme;
    if (mode !== 'signature' && body.signature_scheme === undefined) scheme = null;
    const problem = authProblem(mode, scheme);
    if (problem) throw invalidRequest(problem);
    const secretName = body.secret_name === undefined ? row.secret_name : body.secret_name;
    if (secretName !== null && body.secret) throw invalidRequest('give either secret or secret_name, not both');
    if (secretName !== null) await this.checkSecretName(caller.teamUid, secretName, mode);

    let issued: string | undefined;
    let sealed: SealedValue | null | undefined;
    const senderChange = mode !== row.auth_mode || scheme !== row.signature_scheme;
    if (secretName !== null) {
      sealed = null;
    } else if (row.secret_name !== null || senderChange || body.secret) {
      issued = issueSecret(mode, scheme, body.secret);
      sealed = sealWebhookSecret(this.options.key, uid, issued);
    }
    const values: store.WebhookValues = {
      name,
      auth_mode: mode,
      signature_scheme: scheme,
      secret_name: secretName,
      delivery_id_header: body.delivery_id_header === undefined ? row.delivery_id_header : body.delivery_id_header,
      enabled: body.enabled ?? row.enabled,
    };
    const updated = await withConflicts(store.updateWebhook(this.db, caller.teamUid, uid, values, sealed), {
      [NAME_CONSTRAINT]: () => conflict(`this factory already has a webhook named ${name}`),
    });
    if (!updated) throw notFound(`webhook ${uid} not found`);
    return this.render(await this.load(caller.teamUid, uid), issued);
  }

  /** A new secret at once: the old one fails from the next delivery on, with no overlap. */
  async rotate(caller: Caller, uid: string, given: string | undefined): Promise<WebhookItem> {
    this.options.factories.requireManager(caller);
    const row = await this.load(caller.teamUid, uid);
    if (row.secret_name !== null) {
      throw conflict(
        `this webhook's credential is the team secret ${row.secret_name}; rotate it with \`hangar secrets set ${row.secret_name}\` (PUT /secrets/${row.secret_name})`,
      );
    }
    const secret = issueSecret(row.auth_mode, row.signature_scheme, given);
    await store.updateWebhook(
      this.db,
      caller.teamUid,
      uid,
      store.valuesOf(row),
      sealWebhookSecret(this.options.key, uid, secret),
    );
    return this.render(await this.load(caller.teamUid, uid), secret);
  }

  /** Senders get 404 from now on; automations that select it stay and stop firing. */
  async delete(caller: Caller, uid: string): Promise<void> {
    this.options.factories.requireManager(caller);
    if (!(await store.deleteWebhook(this.db, caller.teamUid, uid))) throw notFound(`webhook ${uid} not found`);
  }

  async deliveries(
    caller: Caller,
    uid: string,
    limit: number,
    cursor: string | undefined,
  ): Promise<{ deliveries: DeliveryItem[]; next_cursor: string | null }> {
    await this.load(caller.teamUid, uid);
    let before: string | undefined;
    if (cursor !== undefined) {
      try {
        before = String(this.options.cursors.decode(cursor, DELIVERY_ORDERING)[0]);
      } catch (error) {
        if (error instanceof InvalidCursorError) throw invalidRequest(error.message);
        throw invalidRequest('cursor is malformed');
      }
      if (!/^\d+$/.test(before)) throw invalidRequest('cursor is malformed');
    }
    const rows = await store.listDeliveries(this.db, uid, limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      deliveries: page.map(renderDelivery),
      next_cursor:
        rows.length > limit && last
          ? this.options.cursors.encode({ ordering: DELIVERY_ORDERING, values: [last.seq] })
          : null,
    };
  }

  async delivery(caller: Caller, uid: string, deliveryId: string): Promise<DeliveryItem> {
    const row = await this.storedDelivery(caller, uid, deliveryId);
    const item = renderDelivery(row);
    if (row.status !== 'Accepted') return item;
    return {
      ...item,
      payload: row.body === null ? null : JSON.parse(row.body),
      runs: await store.firingsOf(this.db, row.seq),
    };
  }

  /** A delivery as stored, for the test-filter action. */
  async storedDelivery(caller: Caller, uid: string, deliveryId: string) {
    await this.load(caller.teamUid, uid);
    const row = await store.findDelivery(this.db, uid, deliveryId);
    if (!row) throw notFound(`webhook ${uid} has no delivery ${deliveryId} (the log keeps the latest 50 and 7 days)`);
    return row;
  }
}

function renderDelivery(row: store.DeliveryRow): DeliveryItem {
  return {
    delivery_id: row.delivery_id,
    status: row.status,
    size_bytes: row.size_bytes,
    received_at: rfc3339(row.received_at),
    ...(row.status === 'Accepted' ? { evaluated_at: row.evaluated_at ? rfc3339(row.evaluated_at) : null } : {}),
  };
}

/** What the automations slice reads from webhooks: their state, and the deliveries waiting for evaluation. */
export const deliveryQueue = {
  claimPending: store.claimPending,
  markEvaluated: store.markEvaluated,
  hasPending: store.hasPending,
  webhooksByUid: store.webhooksByUid,
  deliveriesBySeq: store.deliveriesBySeq,
  channel: store.DELIVERIES_CHANNEL,
};
