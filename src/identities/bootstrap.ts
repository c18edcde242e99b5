import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { generateApiKey } from '../platform/crypto.js';
import { countTeams, insertApiKey, insertMembership, insertTeam, insertUser } from './store.js';

export interface BootstrapResult {
  /** Set only when this start generated the key: the caller prints it once. */
  generatedKey?: string;
  keyFile?: string;
}

/**
 * First start with an empty database: a team `default`, an admin user and an API key. Runs under the startup
 * advisory lock, so replicas starting together create exactly one. Later starts change nothing.
 */
export async function bootstrapInstance(
  db: Kysely<DB>,
  options: { bootstrapApiKey: string | undefined; dataDir: string },
): Promise<BootstrapResult> {
  if ((await countTeams(db)) > 0) return {};
  const key = options.bootstrapApiKey ?? generateApiKey();
  const keyFile = path.join(options.dataDir, 'bootstrap-api-key');
  if (!options.bootstrapApiKey) {
    // Written before the commit: if the commit fails the next start overwrites it; if the process dies after
    // the commit, the key is still on disk.
    fs.mkdirSync(options.dataDir, { recursive: true });
    fs.writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    fs.chmodSync(keyFile, 0o600);
  }
  await db.transaction().execute(async (trx) => {
    const teamUid = await insertTeam(trx, 'default');
    const userUid = await insertUser(trx, { displayName: 'Admin', isAdmin: true });
    await insertMembership(trx, teamUid, userUid, 'admin');
    await insertApiKey(trx, { userUid }, key, 'bootstrap');
  });
  return options.bootstrapApiKey ? {} : { generatedKey: key, keyFile };
}
