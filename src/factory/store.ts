import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { newFactoryUid } from './uid.js';

export interface FactoryRow {
  uid: string;
  team_uid: string;
  name: string;
  is_default: boolean;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

export const DEFAULT_FACTORY_NAME = 'default';

export async function listFactories(db: Kysely<DB>, teamUid: string): Promise<FactoryRow[]> {
  return db.selectFrom('factories').selectAll().where('team_uid', '=', teamUid).orderBy('name').execute();
}

export async function findFactory(db: Kysely<DB>, teamUid: string, uid: string): Promise<FactoryRow | undefined> {
  return db
    .selectFrom('factories')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
}

/** The team's factories whose name contains `search`, in any case (all of them without one). */
export async function searchFactories(db: Kysely<DB>, teamUid: string, search?: string): Promise<FactoryRow[]> {
  let query = db.selectFrom('factories').selectAll().where('team_uid', '=', teamUid);
  if (search) query = query.where(sql<boolean>`strpos(lower(name), lower(${search})) > 0`);
  return query.orderBy('name').execute();
}

export async function findFactoryByName(
  db: Kysely<DB>,
  teamUid: string,
  name: string,
): Promise<FactoryRow | undefined> {
  return db
    .selectFrom('factories')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('name', '=', name)
    .executeTakeFirst();
}

function factoryInsert(db: Kysely<DB>, teamUid: string, name: string, isDefault: boolean) {
  return db.insertInto('factories').values({ uid: newFactoryUid(), team_uid: teamUid, name, is_default: isDefault });
}

/** Fails on factories_team_uid_name_key when the team already has a factory of that name. */
export async function insertFactory(db: Kysely<DB>, teamUid: string, name: string): Promise<FactoryRow> {
  return factoryInsert(db, teamUid, name, false).returningAll().executeTakeFirstOrThrow();
}

/** The team's default factory, made on first use; concurrent first uses agree on one. */
export async function defaultFactory(db: Kysely<DB>, teamUid: string): Promise<FactoryRow> {
  const existing = await db
    .selectFrom('factories')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('is_default', '=', true)
    .executeTakeFirst();
  if (existing) return existing;
  // DO NOTHING rather than a unique violation: callers run this inside their transactions, which must go on.
  const made = await factoryInsert(db, teamUid, DEFAULT_FACTORY_NAME, true)
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
  if (made) return made;
  // Someone else made it meanwhile (or a factory already took the name "default": that one becomes the default).
  await db
    .updateTable('factories')
    .set({ is_default: true })
    .where('team_uid', '=', teamUid)
    .where('name', '=', DEFAULT_FACTORY_NAME)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('factories as d')
            .select('d.uid')
            .where('d.team_uid', '=', teamUid)
            .where('d.is_default', '=', true),
        ),
      ),
    )
    .execute();
  return db
    .selectFrom('factories')
    .selectAll()
    .where('team_uid', '=', teamUid)
    .where('is_default', '=', true)
    .executeTakeFirstOrThrow();
}

/** Serialises changes to one factory's webhooks and automations (the 20-webhook limit, definition applies). */
export async function lockFactory(db: Kysely<DB>, uid: string): Promise<void> {
  await db.selectFrom('factories').select('uid').where('uid', '=', uid).forUpdate().execute();
}

export interface SkillValues {
  name: string;
  description: string;
  prompt: string;
}

/** Every factory skill of the team, with its factory's name (for listings and skill specs). */
export async function teamSkills(db: Kysely<DB>, teamUid: string) {
  return db
    .selectFrom('factory_skills as s')
    .innerJoin('factories as f', 'f.uid', 's.factory_uid')
    .select(['f.name as factory', 's.name', 's.description', 's.prompt'])
    .where('s.team_uid', '=', teamUid)
    .orderBy('f.name')
    .orderBy('s.name')
    .execute();
}

export async function skillsOfFactory(db: Kysely<DB>, factoryUid: string): Promise<SkillValues[]> {
  return db
    .selectFrom('factory_skills')
    .select(['name', 'description', 'prompt'])
    .where('factory_uid', '=', factoryUid)
    .orderBy('name')
    .execute();
}

export async function upsertSkill(
  db: Kysely<DB>,
  factoryUid: string,
  teamUid: string,
  skill: SkillValues,
): Promise<void> {
  await db
    .insertInto('factory_skills')
    .values({ factory_uid: factoryUid, team_uid: teamUid, ...skill })
    .onConflict((oc) =>
      oc
        .columns(['factory_uid', 'name'])
        .doUpdateSet({ description: skill.description, prompt: skill.prompt, updated_at: new Date() }),
    )
    .execute();
}

export async function deleteSkill(db: Kysely<DB>, factoryUid: string, name: string): Promise<void> {
  await db.deleteFrom('factory_skills').where('factory_uid', '=', factoryUid).where('name', '=', name).execute();
}

export async function setDescription(db: Kysely<DB>, uid: string, description: string | null): Promise<void> {
  await db.updateTable('factories').set({ description, updated_at: new Date() }).where('uid', '=', uid).execute();
}
