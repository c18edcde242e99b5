import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { openValue, sealValue } from '../platform/crypto.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { conflict, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { rfc3339 } from '../platform/time.js';
import {
  type CreateSecretBody,
  MAX_SECRET_VALUE_BYTES,
  type SecretGrantBody,
  type SecretGrantItem,
  type SecretItem,
  type UpdateSecretBody,
} from './schemas.js';
import * as store from './store.js';

export interface SecretsServiceOptions {
  db: Kysely<DB>;
  /** AES-256 key from HANGAR_SECRET_KEY or the data directory (src/platform/secret-key.ts). */
  key: Buffer;
  /** A user's role in a team now (the identities slice); `db` may be a caller's transaction. */
  roleInTeam: (db: Kysely<DB>, teamUid: string, userUid: string) => Promise<'admin' | 'member' | undefined>;
  /** Whether the team has this agent identity (the identities slice). */
  agentExists: (teamUid: string, uid: string) => Promise<boolean>;
  /** Whether the team may run in this environment (the environments slice). */
  environmentAccessible: (teamUid: string, environmentId: string) => Promise<boolean>;
  /**
   * Whether the team's runs in this environment may use its secrets (the environments slice): its own, or one another
   * team shares whose use an admin of this team allowed. `db` is the caller's connection or transaction.
   */
  secretsAllowedIn?: (db: Kysely<DB>, teamUid: string, environmentId: string) => Promise<boolean>;
}

/** Binds a ciphertext to its team and name: a row copied elsewhere does not decrypt. */
function context(teamUid: string, name: string): string {
  return `hangar/secrets/${teamUid}/${name}`;
}

function render(row: store.SecretRow): SecretItem {
  return { name: row.name, created_at: rfc3339(row.created_at), updated_at: rfc3339(row.updated_at) };
}

function renderGrant(row: store.GrantRow): SecretGrantItem {
  return { grantee_type: row.grantee_type, grantee_uid: row.grantee_uid, created_at: rfc3339(row.created_at) };
}

function requireAdmin(caller: Caller): void {
  if (caller.role !== 'admin') throw notAuthorized('managing team secrets needs the admin role in this team');
}

function checkSize(value: string): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_SECRET_VALUE_BYTES)
    throw invalidRequest(`a secret value is at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8, got ${bytes}`);
}

/**
 * Team secrets: every member may list names, admins manage them, and values leave only through
 * readSecretValue(), for the parts of Hangar that hand them to a run.
 *
 * Who may put a secret into a run: the team's admins, any secret; anyone else, the secrets an admin granted to
 * them, to the agent identity the run executes as, or to the environment it runs in. A run only names secrets
 * (harness_auth_secrets, the MCP servers it uses), and its code can read what it is given, so naming is using.
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
    const row = await withConflicts(store.insertSecret(this.db, caller.teamUid, body.name, sealed), {
      secrets_pkey: () =>
        conflict(
          `a secret named ${body.name} already exists; change its value with \`hangar secrets set ${body.name}\` (PUT /secrets/${body.name})`,
        ),
    });
    return render(row);
  }

  async update(caller: Caller, name: string, body: UpdateSecretBody): Promise<SecretItem> {
    requireAdmin(caller);
    checkSize(body.value);
    const row = await store.updateSecret(
      this.db,
      caller.teamUid,
      name,
      sealValue(this.options.key, body.value, context(caller.teamUid, name)),
    );
    if (!row) throw notFound(`secret ${name} not found`);
    return render(row);
  }

  async delete(caller: Caller, name: string): Promise<void> {
    requireAdmin(caller);
    if (!(await store.deleteSecret(this.db, caller.teamUid, name))) throw notFound(`secret ${name} not found`);
  }

  async listGrants(caller: Caller, name: string): Promise<{ grants: SecretGrantItem[] }> {
    requireAdmin(caller);
    await this.requireSecret(caller.teamUid, name);
    return { grants: (await store.listGrants(this.db, caller.teamUid, name)).map(renderGrant) };
  }

  /** Grants a secret to a member, an agent identity or an environment of the team; 201 when new, 200 when it was there. */
  async grant(
    caller: Caller,
    name: string,
    body: SecretGrantBody,
  ): Promise<{ created: boolean; grant: SecretGrantItem }> {
    requireAdmin(caller);
    await this.requireSecret(caller.teamUid, name);
    await this.requireGrantee(caller.teamUid, body);
    const created = await store.insertGrant(this.db, caller.teamUid, name, body.grantee_type, body.grantee_uid);
    const grant = (await store.listGrants(this.db, caller.teamUid, name)).find(
      (row) => row.grantee_type === body.grantee_type && row.grantee_uid === body.grantee_uid,
    );
    // The secret was deleted between the insert and the read.
    if (!grant) throw notFound(`secret ${name} not found`);
    return { created, grant: renderGrant(grant) };
  }

  async revoke(caller: Caller, name: string, body: SecretGrantBody): Promise<void> {
    requireAdmin(caller);
    if (!(await store.deleteGrant(this.db, caller.teamUid, name, body.grantee_type, body.grantee_uid))) {
      throw notFound(`secret ${name} is not granted to ${body.grantee_type} ${body.grantee_uid}`);
    }
  }

  private async requireSecret(teamUid: string, name: string): Promise<void> {
    if ((await store.existingNames(this.db, teamUid, [name])).size === 0) throw notFound(`secret ${name} not found`);
  }

  private async requireGrantee(teamUid: string, body: SecretGrantBody): Promise<void> {
    const { grantee_type: type, grantee_uid: uid } = body;
    const exists =
      type === 'member'
        ? (await this.options.roleInTeam(this.db, teamUid, uid)) !== undefined
        : type === 'agent'
          ? await this.options.agentExists(teamUid, uid)
          : await this.options.environmentAccessible(teamUid, uid);
    if (!exists)
      throw invalidRequest(
        `this team has no ${type === 'member' ? 'member' : type === 'agent' ? 'agent identity' : 'environment'} ${uid}`,
      );
  }

  /**
   * The names among `names` that a run acting as `user` may not use (missing ones included, so that a refusal
   * does not tell a member which secrets exist). `db` is the caller's connection or transaction.
   */
  async unusableSecrets(db: Kysely<DB>, user: store.SecretUser, names: string[]): Promise<string[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    // Another team's environment runs that team's setup inside the run: the run's team's secrets go there only with
    // the consent of the team's admins, whoever asks (admins included), and the refusal says how to give it.
    if (
      user.environmentId !== null &&
      this.options.secretsAllowedIn &&
      !(await this.options.secretsAllowedIn(db, user.teamUid, user.environmentId))
    )
      throw notAuthorized(
        `environment ${user.environmentId} is another team's (shared with this team): its setup runs inside the run, and ` +
          `this team's admins have not allowed its secrets there (this run would use ${unique.join(', ')}). ` +
          `A team admin can allow it with \`hangar environments trust ${user.environmentId}\` (POST /environments/${user.environmentId}/trust)`,
      );
    if ((await this.options.roleInTeam(db, user.teamUid, user.creatorUid)) === 'admin') return [];
    const granted = await store.grantedNames(db, user, unique);
    return unique.filter((name) => !granted.has(name));
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
