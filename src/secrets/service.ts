import type { Kysely } from 'kysely';
import type { Caller } from '../identities/caller.js';
import { openValue, sealValue } from '../platform/crypto.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { MAX_SECRET_VALUE_BYTES, type CreateSecretBody, type SecretItem, type UpdateSecretBody } from './schemas.js';
import * as store from './store.js';
import { rfc3339 } from '../platform/time.js';

export interface SecretsServiceOptions {
  db: Kysely<DB>;
  /** AES-256 key from HANGAR_SECRET_KEY or the data directory (src/platform/secret-key.ts). */
  key: Buffer;
}

/** Binds a ciphertext to its team and name: a row copied elsewhere does not decrypt. */
function context(teamUid: string, name: string): string {
  return `hangar/secrets/${teamUid}/${name}`;
}

function render(row: store.SecretRow): SecretItem {
  return { name: row.name, created_at: rfc3339(row.created_at), updated_at: rfc3339(row.updated_at) };
}

function requireAdmin(caller: Caller): void {
  if (caller.role !== 'admin') throw notAuthorized('managing team secrets needs the admin role in this team');
}

function checkSize(value: string): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_SECRET_VALUE_BYTES) throw invalidRequest(`a secret value is at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8, got ${bytes}`);
}

/**
 * Team secrets: every member may list names, admins manage them, and values leave only through
 * readSecretValue(), for the parts of Hangar that hand them to a run.
 */
export class SecretsService {
  constructor(private readonly options: SecretsServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  async list(caller: Caller): Promise<{ secrets: SecretItem[] }> {
    return { secrets: (await store.listSecrets(this.db, caller.teamUid)).map(render) };
  }

  async create(caller: Caller, body: CreateSecretBody): Promise<SecretItem> {
    requireAdmin(caller);
    checkSize(body.value);
    const sealed = sealValue(this.options.key, body.value, context(caller.teamUid, body.name));
    const row = await store.insertSecret(this.db, caller.teamUid, body.name, sealed);
    if (!row) throw new ApiError(409, 'conflict', `a secret named ${body.name} already exists; change its value with PUT /secrets/${body.name}`);
    return render(row);
  }

  async update(caller: Caller, name: string, body: UpdateSecretBody): Promise<SecretItem> {
    requireAdmin(caller);
    checkSize(body.value);
    const row = await store.updateSecret(this.db, caller.teamUid, name, sealValue(this.options.key, body.value, context(caller.teamUid, name)));
    if (!row) throw notFound(`secret ${name} not found`);
    return render(row);
  }

  async delete(caller: Caller, name: string): Promise<void> {
    requireAdmin(caller);
    if (!(await store.deleteSecret(this.db, caller.teamUid, name))) throw notFound(`secret ${name} not found`);
  }

  /** The names among `names` that the team has no secret for (to check references before saving them). */
  async missingSecrets(teamUid: string, names: string[]): Promise<string[]> {
    const existing = await store.existingNames(this.db, teamUid, names);
    return names.filter((name) => !existing.has(name));
  }

  /** The decrypted value, or null when the team has no such secret. Never send it to an API client. */
  async readSecretValue(teamUid: string, name: string): Promise<string | null> {
    const sealed = await store.findSealed(this.db, teamUid, name);
    return sealed ? openValue(this.options.key, sealed, context(teamUid, name)) : null;
  }
}
