import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { newUid, randomBase62 } from '../platform/crypto.js';
import { invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { rfc3339 as iso } from '../platform/time.js';
import { type LimitMaximums, normalizeConfig, storedConfig } from './config.js';
import { type RepoRef, repoKey } from './github.js';
import type { EnvironmentActivity, RunActivityLookup } from './run-activity.js';
import type {
  EnvironmentConfig,
  EnvironmentConfigBody,
  EnvironmentForRun,
  EnvironmentItem,
  GuestSecretsItem,
} from './schemas.js';
import type { EnvironmentSnapshots } from './snapshots.js';
import * as store from './store.js';

export interface EnvironmentsServiceOptions {
  db: Kysely<DB>;
  runActivity: RunActivityLookup;
  /** Setup snapshots (issue 28): the list shows each environment's newest for the caller's team. */
  snapshots?: EnvironmentSnapshots;
  /** The container limits an environment may ask for at most; undefined checks only their form. */
  limitMaximums?: LimitMaximums;
  /**
   * The names among `names` the user (or agent identity) may not use in the team (the secrets slice's grant check):
   * an environment's editor must be one who may use the secrets it names.
   */
  unusableSecrets: (
    user: { teamUid: string; creatorUid: string; agentUid: string | null; environmentId: string | null },
    names: string[],
  ) => Promise<string[]>;
  /** Whether the team has the runner: an environment's default_runner_uid names one of its owning team's. */
  runnerExists?: (teamUid: string, uid: string) => Promise<boolean>;
}

/** A repository named by the caller's accessible environments, with the environments that name it. */
export interface EnvironmentRepository {
  ref: RepoRef;
  environments: Array<{ uid: string; name: string }>;
}

const UID = /^[A-Za-z0-9]{22}$/;
/** Share-link tokens carry a prefix so that secret scanners recognise a leaked one. */
const SHARE_TOKEN_PREFIX = 'hgrenv_';

/** The consent routes are for guests: an owning team's runs always use its own secrets. */
const ownEnvironment = (uid: string) =>
  invalidRequest(
    `environment ${uid} belongs to this team; its runs use the team's secrets without consent, which is for environments another team shares`,
  );

const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

function configOf(body: EnvironmentConfigBody, maximums: LimitMaximums | undefined): EnvironmentConfig {
  const result = normalizeConfig(body, maximums);
  if ('problem' in result) throw invalidRequest(result.problem);
  return result.config;
}

/** The creator or last editor as Oz shows a principal; absent when nothing recorded one. */
function principal<K extends 'creator' | 'last_editor'>(
  key: K,
  type: 'user' | 'service_account' | null,
  uid: string | null,
  profile: store.EnvironmentRow['creator_profile'],
): Partial<Record<K, NonNullable<EnvironmentItem['creator']>>> {
  if (!type || !uid) return {};
  const value = {
    type,
    uid,
    ...(profile?.display_name ? { display_name: profile.display_name } : {}),
    ...(profile?.email ? { email: profile.email } : {}),
  };
  return { [key]: value } as Partial<Record<K, NonNullable<EnvironmentItem['creator']>>>;
}

function render(
  row: store.EnvironmentRow,
  activity: EnvironmentActivity | undefined,
  guests?: store.GuestRow[],
): EnvironmentItem {
  return {
    uid: row.uid,
    config: storedConfig(row.config),
    last_updated: iso(row.updated_at),
    setup_failed: row.setup_failed,
    ...(activity?.lastStarted ? { last_task_run_timestamp: iso(activity.lastStarted) } : {}),
    ...(activity ? { last_task_created: iso(activity.lastCreated) } : {}),
    scope: { type: 'Team', uid: row.team_uid },
    ...principal('creator', row.creator_type, row.creator_uid, row.creator_profile),
    ...principal('last_editor', row.last_editor_type, row.last_editor_uid, row.last_editor_profile),
    access: row.access,
    created_at: iso(row.created_at),
    ...(guests
      ? {
          sharing: {
            guests: guests.map((guest) => ({
              team_uid: guest.team_uid,
              team_name: guest.team_name,
              via: guest.via,
              since: iso(guest.created_at),
            })),
            link_active: row.link_active,
          },
        }
      : {}),
  };
}

/**
 * Environments: the config a run's workspace is prepared from. A team sees the ones it owns and the ones
 * shared with it (as a guest, or by joining with a share link); only the owning team changes one, and only its
 * admins share it. An environment a team cannot reach does not exist for it (404).
 */
export class EnvironmentsService {
  constructor(private readonly options: EnvironmentsServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  private who(caller: Caller) {
    return { teamUid: caller.teamUid, principalUid: caller.principal.uid };
  }

  /**
   * For run creation: may this team run in the environment? `db` may be the caller's transaction (the scheduler
   * holds one; on PGlite, with its single connection, using another would wait forever).
   */
  async isAccessible(teamUid: string, uid: string, db: Kysely<DB> = this.db): Promise<boolean> {
    return UID.test(uid) && store.isAccessible(db, teamUid, uid);
  }

  /**
   * The team secrets a run in the environment uses on the server's side (the registry credentials of its image), so
   * that whoever starts such a run needs the right to use them, as for the secrets the run names itself.
   */
  async secretsForRun(teamUid: string, uid: string, db: Kysely<DB> = this.db): Promise<string[]> {
    if (!UID.test(uid)) return [];
    const row = await store.findAccessible(db, teamUid, uid);
    // A shared environment's registry secret is its owner's, never the guest's (registrySecretFor): nothing of the
    // guest team's is named.
    const secret = row?.access === 'owner' ? storedConfig(row.config).registry_secret_name : undefined;
    return secret ? [secret] : [];
  }

  /**
   * The team secret a run in the environment pulls its image with: the environment's registry_secret_name, in the
   * team that OWNS the environment (issue 47.3a). A guest's run of a shared environment pulls with the owner's
   * credentials, which go only to the registry the owner's image names; resolved in the guest's team, the name would
   * send the guest's own credential of that name to a registry the owner chose. Undefined when there is none.
   */
  async registrySecretFor(
    teamUid: string,
    uid: string,
    db: Kysely<DB> = this.db,
  ): Promise<{ teamUid: string; name: string } | undefined> {
    const row = UID.test(uid) ? await store.findAccessible(db, teamUid, uid) : undefined;
    const name = row ? storedConfig(row.config).registry_secret_name : undefined;
    return row && name ? { teamUid: row.team_uid, name } : undefined;
  }

  async list(caller: Caller, sortBy: 'name' | 'last_updated'): Promise<{ environments: EnvironmentItem[] }> {
    const rows = await store.listAccessible(this.db, caller.teamUid, sortBy);
    const activity = await this.options.runActivity.byEnvironment(
      this.who(caller),
      rows.map((row) => row.uid),
    );
    const snapshots = this.options.snapshots?.enabled
      ? await this.options.snapshots.newestFor(
          caller.teamUid,
          rows.map((row) => row.uid),
        )
      : new Map();
    return {
      environments: rows.map((row) => {
        const item = render(row, activity.get(row.uid));
        const snapshot = snapshots.get(row.uid);
        return snapshot
          ? {
              ...item,
              snapshot: {
                key: snapshot.key.slice(0, 16),
                size_bytes: snapshot.sizeBytes,
                created_at: iso(snapshot.createdAt),
                age_seconds: Math.max(0, Math.round((Date.now() - snapshot.createdAt.getTime()) / 1000)),
              },
            }
          : item;
      }),
    };
  }

  /**
   * Drops every setup snapshot of an environment (an instance administrator's `hangar environments rebuild`): its
   * next run sets up from nothing. The engines remove the files of dropped snapshots at their next maintenance.
   */
  async rebuild(uid: string): Promise<{ environment_uid: string; snapshots_dropped: number }> {
    const exists =
      UID.test(uid) &&
      (await this.db.selectFrom('environments').select('uid').where('uid', '=', uid).executeTakeFirst()) !== undefined;
    if (!exists) throw notFound(`environment ${uid} not found`);
    const dropped = this.options.snapshots ? await this.options.snapshots.drop(uid) : 0;
    return { environment_uid: uid, snapshots_dropped: dropped };
  }

  async get(caller: Caller, uid: string): Promise<EnvironmentItem> {
    return this.item(caller, await this.accessible(caller, uid));
  }

  async create(caller: Caller, body: EnvironmentConfigBody): Promise<EnvironmentItem> {
    const uid = newUid();
    const config = configOf(body, this.options.limitMaximums);
    await this.requireRunner(caller, config);
    await this.requireEditorSecrets(caller, undefined, config);
    await store.insertEnvironment(this.db, {
      uid,
      teamUid: caller.teamUid,
      config,
      creator: { type: caller.principal.type, uid: caller.principal.uid },
    });
    return this.get(caller, uid);
  }

  async update(caller: Caller, uid: string, body: EnvironmentConfigBody): Promise<EnvironmentItem> {
    const config = configOf(body, this.options.limitMaximums);
    await this.requireOwner(caller, uid);
    await this.requireRunner(caller, config);
    const current = await this.accessible(caller, uid);
    await this.requireEditorSecrets(caller, storedConfig(current.config), config);
    await store.updateConfig(this.db, caller.teamUid, uid, config, {
      type: caller.principal.type,
      uid: caller.principal.uid,
    });
    return this.get(caller, uid);
  }

  /** A default runner must be the owning team's own; another team's is answered as a missing one. */
  private async requireRunner(caller: Caller, config: EnvironmentConfig): Promise<void> {
    const runner = config.default_runner_uid;
    if (runner && !(await this.options.runnerExists?.(caller.teamUid, runner)))
      throw invalidRequest(
        `default_runner_uid: runner ${runner} does not exist in this team; \`hangar runners list\` (GET /runners) lists them`,
      );
  }

  /**
   * The default runner of an environment a run of `teamUid` uses, with the team that owns the runner: the owning
   * team's (a guest's run of a shared environment takes the shape the owner chose). Undefined when it names none.
   */
  async defaultRunnerFor(
    teamUid: string,
    uid: string,
    db: Kysely<DB> = this.db,
  ): Promise<{ teamUid: string; runnerUid: string } | undefined> {
    const row = UID.test(uid) ? await store.findAccessible(db, teamUid, uid) : undefined;
    const runner = row ? storedConfig(row.config).default_runner_uid : undefined;
    return row && runner ? { teamUid: row.team_uid, runnerUid: runner } : undefined;
  }

  /**
   * Every run's pull sends the environment's registry secret to the registry its image names, so whoever sets the
   * image, the registry secret or the setup must be one who may use every secret the config names (issue 47.3b):
   * otherwise a member re-points an admin's environment at her own registry and the admin's next run sends her the
   * admin-only secret. Checked as the editor (her grants, or her agent identity's), NOT with the environment's own
   * grants: a secret granted to an environment is for the runs in it, not for whoever edits it. A change of only
   * the name, description or limits needs nothing.
   */
  private async requireEditorSecrets(
    caller: Caller,
    before: EnvironmentConfig | undefined,
    after: EnvironmentConfig,
  ): Promise<void> {
    const names = after.registry_secret_name ? [after.registry_secret_name] : [];
    if (names.length === 0) return;
    const changed =
      !before ||
      before.docker_image !== after.docker_image ||
      before.registry_secret_name !== after.registry_secret_name ||
      JSON.stringify(before.setup_commands) !== JSON.stringify(after.setup_commands);
    if (!changed) return;
    const refused = await this.options.unusableSecrets(
      {
        teamUid: caller.teamUid,
        creatorUid: caller.principal.uid,
        agentUid: caller.principal.type === 'service_account' ? caller.principal.uid : null,
        environmentId: null,
      },
      names,
    );
    if (refused.length === 0) return;
    const list = refused.join(', ');
    throw notAuthorized(
      before && before.registry_secret_name === after.registry_secret_name
        ? `changing the image, registry secret or setup of this environment needs the right to use its registry secret ${list}, which is not granted to you: its runs would send it to the registry the image names. A team admin can make the change, or grant you the secret (\`hangar secrets grant ${list} --member <uid>\`)`
        : `registry_secret_name names team secret ${list}, which is not granted to you: the environment's runs would send it to the registry its image names. A team admin can set it, or grant you the secret (\`hangar secrets grant ${list} --member <uid>\`)`,
    );
  }

  async delete(caller: Caller, uid: string): Promise<void> {
    await this.requireOwner(caller, uid);
    await store.deleteEnvironment(this.db, caller.teamUid, uid);
  }

  async addGuest(caller: Caller, uid: string, teamUid: string): Promise<EnvironmentItem> {
    await this.requireOwnerAdmin(caller, uid);
    if (teamUid === caller.teamUid) throw invalidRequest('the owning team cannot be its own guest');
    if (!UID.test(teamUid) || !(await store.grantAccess(this.db, uid, teamUid, 'guest')))
      throw notFound(`team ${teamUid} not found`);
    return this.get(caller, uid);
  }

  /** Removes a team's access, whether it was added as a guest or joined with the link. */
  async removeGuest(caller: Caller, uid: string, teamUid: string): Promise<void> {
    await this.requireOwnerAdmin(caller, uid);
    if (!(await store.revokeAccess(this.db, uid, teamUid)))
      throw notFound(`team ${teamUid} has no access to environment ${uid}`);
  }

  /**
   * Makes a new share link token, replacing (and so invalidating) any earlier one. Teams that already joined
   * keep their access; remove them with removeGuest.
   */
  async createShareLink(caller: Caller, uid: string): Promise<{ environment_uid: string; token: string }> {
    await this.requireOwnerAdmin(caller, uid);
    const token = SHARE_TOKEN_PREFIX + randomBase62(40);
    await store.setShareTokenHash(this.db, uid, hashToken(token));
    return { environment_uid: uid, token };
  }

  async join(caller: Caller, token: string): Promise<EnvironmentItem> {
    const shared = await store.findByShareTokenHash(this.db, hashToken(token.trim()));
    if (!shared) throw notFound('no environment is shared with this link (it may have been replaced by a newer one)');
    if (shared.team_uid !== caller.teamUid) await store.grantAccess(this.db, shared.uid, caller.teamUid, 'link');
    return this.get(caller, shared.uid);
  }

  /** The repositories of every environment the team can reach, each once, with the environments naming it. */
  async accessibleRepositories(teamUid: string, db: Kysely<DB> = this.db): Promise<EnvironmentRepository[]> {
    const byRepo = new Map<string, EnvironmentRepository>();
    for (const row of await store.listAccessible(db, teamUid, 'name')) {
      const config = storedConfig(row.config);
      for (const ref of config.github_repos) {
        const entry = byRepo.get(repoKey(ref)) ?? { ref, environments: [] };
        entry.environments.push({ uid: row.uid, name: config.name });
        byRepo.set(repoKey(ref), entry);
      }
    }
    return [...byRepo.values()];
  }

  /**
   * The team's oldest own environment naming the repository and created by a user (runs started from GitHub run in
   * it, on that user's behalf); undefined when there is none.
   */
  async oldestNaming(teamUid: string, ref: RepoRef): Promise<{ uid: string; creatorUid: string } | undefined> {
    for (const row of await store.listOwnedOldestFirst(this.db, teamUid)) {
      if (row.creator_type !== 'user' || !row.creator_uid) continue;
      if (storedConfig(row.config).github_repos.some((named) => repoKey(named) === repoKey(ref)))
        return { uid: row.uid, creatorUid: row.creator_uid };
    }
    return undefined;
  }

  /**
   * What a run in this environment needs prepared; undefined when the team can no longer reach it. A run of a team
   * other than the owner's also gets `guest_run` (see GuestRun): the engine keeps the owner's git settings and the
   * guest's secrets apart by it.
   */
  async setupFor(teamUid: string, uid: string): Promise<EnvironmentForRun | undefined> {
    const raw = await store.configForRun(this.db, teamUid, uid);
    if (!raw) return undefined;
    const guest = await store.guestAccess(this.db, teamUid, uid);
    const config: EnvironmentForRun = storedConfig(raw);
    return guest
      ? {
          ...config,
          guest_run: { owner_team_uid: guest.owner_team_uid, secrets_allowed: guest.secrets_allowed_at !== null },
        }
      : config;
  }

  /**
   * Whether runs of `teamUid` in the environment may use the team's secrets: always in its own environments, and in
   * one another team shares only once an admin of `teamUid` allowed it (allowGuestSecrets). False when the team cannot
   * reach it. `db` may be the caller's transaction.
   */
  async secretsAllowed(teamUid: string, uid: string, db: Kysely<DB> = this.db): Promise<boolean> {
    if (!UID.test(uid)) return false;
    const guest = await store.guestAccess(db, teamUid, uid);
    if (guest) return guest.secrets_allowed_at !== null;
    return store.isAccessible(db, teamUid, uid);
  }

  /** A guest team's admin lets the team's runs in the environment use the team's secrets (audited). */
  async allowGuestSecrets(caller: Caller, uid: string): Promise<GuestSecretsItem> {
    await this.requireGuestAdmin(caller, uid);
    await store.setSecretsAllowed(this.db, uid, caller.teamUid, caller.principal.uid);
    return this.guestSecrets(caller, uid);
  }

  /** Takes that consent back: the team's runs in the environment get none of its secrets again (audited). */
  async disallowGuestSecrets(caller: Caller, uid: string): Promise<void> {
    await this.requireGuestAdmin(caller, uid);
    await store.setSecretsAllowed(this.db, uid, caller.teamUid, null);
  }

  /** Whether the caller's team allowed its secrets in an environment another team shares with it. */
  async guestSecrets(caller: Caller, uid: string): Promise<GuestSecretsItem> {
    const row = await this.accessible(caller, uid);
    if (row.access === 'owner') throw ownEnvironment(uid);
    const guest = await store.guestAccess(this.db, caller.teamUid, uid);
    if (!guest) throw notFound(`environment ${uid} not found`);
    return {
      environment_uid: uid,
      owner_team_uid: guest.owner_team_uid,
      secrets_allowed: guest.secrets_allowed_at !== null,
      ...(guest.secrets_allowed_at ? { allowed_at: iso(guest.secrets_allowed_at) } : {}),
      ...(guest.secrets_allowed_by ? { allowed_by: guest.secrets_allowed_by } : {}),
    };
  }

  /** Records whether the latest setup of the environment failed (shown as `setup_failed`). */
  async recordSetupResult(uid: string, failed: boolean): Promise<void> {
    await store.setSetupFailed(this.db, uid, failed);
  }

  private async accessible(caller: Caller, uid: string): Promise<store.EnvironmentRow> {
    const row = UID.test(uid) ? await store.findAccessible(this.db, caller.teamUid, uid) : undefined;
    if (!row) throw notFound(`environment ${uid} not found`);
    return row;
  }

  private async requireOwner(caller: Caller, uid: string): Promise<void> {
    const row = await this.accessible(caller, uid);
    if (row.access !== 'owner')
      throw notAuthorized(`environment ${uid} is shared with this team; only its owning team can change it`);
  }

  /** Whether a guest team's secrets go into its runs in a shared environment is decided by the guest team's admins. */
  private async requireGuestAdmin(caller: Caller, uid: string): Promise<void> {
    const row = await this.accessible(caller, uid);
    if (row.access === 'owner') throw ownEnvironment(uid);
    if (caller.role !== 'admin')
      throw notAuthorized("allowing this team's secrets in an environment another team shares needs the admin role");
  }

  /** Who else may use an environment is decided by the admins of its owning team. */
  private async requireOwnerAdmin(caller: Caller, uid: string): Promise<void> {
    await this.requireOwner(caller, uid);
    if (caller.role !== 'admin') throw notAuthorized('sharing an environment needs the admin role in its owning team');
  }

  /** One environment as its caller sees it; the owning team also sees who it is shared with. */
  private async item(caller: Caller, row: store.EnvironmentRow): Promise<EnvironmentItem> {
    const activity = await this.options.runActivity.byEnvironment(this.who(caller), [row.uid]);
    const guests = row.access === 'owner' ? await store.listGuests(this.db, row.uid) : undefined;
    return render(row, activity.get(row.uid), guests);
  }
}
