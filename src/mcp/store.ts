import { type Kysely, sql } from 'kysely';
import type { DB } from '../database.js';
import { FOREIGN_KEY_VIOLATION, sqlState } from '../platform/db/sql-state.js';
import type { McpDefinition } from './definition.js';

export interface McpServerRow {
  uid: string;
  /** The owning team. */
  team_uid: string;
  name: string;
  definition: McpDefinition;
  created_at: Date;
  updated_at: Date;
  shared_with: string[];
}

/** Servers a team may see and use: its own and those shared with it. */
function selectVisible(db: Kysely<DB>, teamUid: string) {
  return db
    .selectFrom('mcp_servers as s')
    .select(['s.uid', 's.team_uid', 's.name', 's.definition', 's.created_at', 's.updated_at'])
    .select(
      sql<
        string[]
      >`coalesce((SELECT json_agg(sh.team_uid ORDER BY sh.team_uid) FROM mcp_server_shares sh WHERE sh.server_uid = s.uid), '[]')`.as(
        'shared_with',
      ),
    )
    .where((eb) =>
      eb.or([
        eb('s.team_uid', '=', teamUid),
        eb.exists(
          eb
            .selectFrom('mcp_server_shares as sh')
            .select('sh.server_uid')
            .whereRef('sh.server_uid', '=', 's.uid')
            .where('sh.team_uid', '=', teamUid),
        ),
      ]),
    );
}

const asRow = (row: Omit<McpServerRow, 'definition'> & { definition: unknown }) => row as McpServerRow;

export async function listVisible(db: Kysely<DB>, teamUid: string): Promise<McpServerRow[]> {
  // By code point, whatever the database's locale; names repeat across owning teams, so uid breaks ties.
  return (await selectVisible(db, teamUid).orderBy(sql`s.name COLLATE "C"`).orderBy('s.uid').execute()).map(asRow);
}

export async function findVisible(db: Kysely<DB>, teamUid: string, uid: string): Promise<McpServerRow | undefined> {
  const row = await selectVisible(db, teamUid).where('s.uid', '=', uid).executeTakeFirst();
  return row && asRow(row);
}

/** Fails on mcp_servers_team_uid_name_key when the team already has a server of that name (so does updateServer). */
export async function insertServer(
  db: Kysely<DB>,
  row: { uid: string; team_uid: string; name: string; definition: McpDefinition },
): Promise<void> {
  await db
    .insertInto('mcp_servers')
    .values({ ...row, definition: JSON.stringify(row.definition) })
    .execute();
}

export async function updateServer(
  db: Kysely<DB>,
  ownerTeamUid: string,
  uid: string,
  values: { name: string; definition: McpDefinition },
): Promise<boolean> {
  const result = await db
    .updateTable('mcp_servers')
    .set({ name: values.name, definition: JSON.stringify(values.definition), updated_at: sql`clock_timestamp()` })
    .where('team_uid', '=', ownerTeamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteServer(db: Kysely<DB>, ownerTeamUid: string, uid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('mcp_servers')
    .where('team_uid', '=', ownerTeamUid)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Idempotent; 'unknown_team' when no team has that uid (the foreign key says so, not a read of teams). */
export async function insertShare(db: Kysely<DB>, uid: string, teamUid: string): Promise<'shared' | 'unknown_team'> {
  try {
    await db
      .insertInto('mcp_server_shares')
      .values({ server_uid: uid, team_uid: teamUid })
      .onConflict((oc) => oc.columns(['server_uid', 'team_uid']).doNothing())
      .execute();
    return 'shared';
  } catch (error) {
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) return 'unknown_team';
    throw error;
  }
}

export async function deleteShare(db: Kysely<DB>, uid: string, teamUid: string): Promise<boolean> {
  const result = await db
    .deleteFrom('mcp_server_shares')
    .where('server_uid', '=', uid)
    .where('team_uid', '=', teamUid)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
