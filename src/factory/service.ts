import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { conflict, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { rfc3339 } from '../platform/time.js';
import type { FactoryItem } from './schemas.js';
import * as store from './store.js';

function render(row: store.FactoryRow): FactoryItem {
  return {
    uid: row.uid,
    name: row.name,
    is_default: row.is_default,
    created_at: rfc3339(row.created_at),
    updated_at: rfc3339(row.updated_at),
  };
}

/** Webhooks, automations and definitions change only in the hands of a team admin. */
export function requireFactoryManager(caller: Caller): void {
  if (caller.role !== 'admin')
    throw notAuthorized('managing the factory (webhooks, automations, definitions) needs the admin role in this team');
}

/** A team's factories: the containers of its webhooks and automations. */
export class FactoriesService {
  constructor(private readonly db: Kysely<DB>) {}

  async list(caller: Caller): Promise<{ factories: FactoryItem[] }> {
    await store.defaultFactory(this.db, caller.teamUid);
    return { factories: (await store.listFactories(this.db, caller.teamUid)).map(render) };
  }

  async create(caller: Caller, name: string): Promise<FactoryItem> {
    requireFactoryManager(caller);
    const trimmed = name.trim();
    if (trimmed === '') throw invalidRequest('name must not be blank');
    const row = await withConflicts(store.insertFactory(this.db, caller.teamUid, trimmed), {
      factories_team_uid_name_key: () => conflict(`this team already has a factory named ${trimmed}`),
    });
    return render(row);
  }

  /** The factory a new webhook or automation goes to: the one named, or the team's default. */
  async resolve(db: Kysely<DB>, teamUid: string, factoryUid: string | undefined): Promise<store.FactoryRow> {
    if (factoryUid === undefined) return store.defaultFactory(db, teamUid);
    const row = await store.findFactory(db, teamUid, factoryUid);
    if (!row) throw notFound(`factory ${factoryUid} not found`);
    return row;
  }

  /** Webhooks and automations are managed under the same rule as their factories. */
  requireManager(caller: Caller): void {
    requireFactoryManager(caller);
  }

  /** Holds the factory until the transaction ends, so that one creation at a time counts against its limits. */
  async lock(db: Kysely<DB>, uid: string): Promise<void> {
    await store.lockFactory(db, uid);
  }
}
