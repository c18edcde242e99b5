import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import type { Caller } from '../../identities/index.js';
import { generateWorkerKey } from '../../platform/crypto.js';
import { invalidRequest, notAuthorized, notFound } from '../../platform/http/errors.js';
import { rfc3339 } from '../../platform/time.js';
import { workerPatternProblem } from './pattern.js';
import type { CreateWorkerKeyBody } from './schemas.js';
import { insertWorkerKey, listWorkerKeys, revokeWorkerKey, type WorkerKeyRow } from './store.js';

function requireTeamAdmin(caller: Caller): void {
  if (caller.role !== 'admin') throw notAuthorized('managing worker keys needs the admin role in this team');
}

function view(row: WorkerKeyRow) {
  return {
    uid: row.uid,
    name: row.name,
    display_prefix: row.display_prefix,
    worker_id: row.worker_id,
    ...(row.created_by_uid ? { created_by_uid: row.created_by_uid } : {}),
    created_at: rfc3339(row.created_at),
    ...(row.revoked_at ? { revoked_at: rfc3339(row.revoked_at) } : {}),
  };
}

/** A team's worker keys: team admins create and revoke them; every member may list them (never the keys). */
export class WorkerKeysService {
  constructor(private readonly options: { db: Kysely<DB>; onRevoked: (keyUid: string) => void }) {}

  async create(caller: Caller, body: CreateWorkerKeyBody) {
    requireTeamAdmin(caller);
    const name = body.name.trim();
    if (name === '') throw invalidRequest('name must not be blank');
    const problem = workerPatternProblem(body.worker_id);
    if (problem) throw invalidRequest(problem);
    const key = generateWorkerKey();
    const uid = await insertWorkerKey(this.options.db, {
      teamUid: caller.teamUid,
      key,
      name,
      workerId: body.worker_id,
      createdBy: caller.principal.uid,
    });
    const [row] = await listWorkerKeys(this.options.db, caller.teamUid, uid);
    return { ...view(row!), key };
  }

  async list(caller: Caller) {
    return { worker_keys: (await listWorkerKeys(this.options.db, caller.teamUid)).map(view) };
  }

  /** The key stops at once for new connections everywhere; open ones close on this replica now, elsewhere at their next heartbeat. */
  async revoke(caller: Caller, uid: string): Promise<void> {
    requireTeamAdmin(caller);
    if (!(await revokeWorkerKey(this.options.db, caller.teamUid, uid))) throw notFound(`worker key ${uid} not found`);
    this.options.onRevoked(uid);
  }
}
