import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import type { Authenticator } from '../../identities/index.js';
import { hashApiKey } from '../../platform/crypto.js';
import { authenticationRequired, notAuthorized } from '../../platform/http/errors.js';
import { matchesWorkerPattern } from './pattern.js';
import { findActiveWorkerKey } from './store.js';

/** A worker key that opened the websocket: the team it acts for and the worker IDs it may connect as. */
export interface WorkerCredential {
  keyUid: string;
  teamUid: string;
  workerPattern: string;
}

export const HOW_TO_GET_A_WORKER_KEY =
  'a team admin creates one with `hangar workers keys create --worker-id <id or pattern> --name <name>` (POST /api/v1/selfhosted/worker-keys), and the worker reads it from HANGAR_API_KEY';

/**
 * The worker websocket takes worker keys only. A member's or agent's API key is refused with 403 (it is a valid
 * key, just not one for this), so that a member cannot receive the runs, team secrets and task tokens of a
 * worker of the team. Keys are read on every connect: a revoked key stops at once on every replica.
 */
export class WorkerKeyAuthenticator {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly apiKeys: Pick<Authenticator, 'principal'>,
  ) {}

  /** `client`: the caller's address; a wrong worker key counts as a failed authentication of it, like a wrong API key. */
  async credential(
    authorization: string | undefined,
    requestedTeam: string | undefined,
    client: string,
  ): Promise<WorkerCredential> {
    if (!authorization)
      throw authenticationRequired(`send a worker key as "Authorization: Bearer <key>": ${HOW_TO_GET_A_WORKER_KEY}`);
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw authenticationRequired('the Authorization header must be "Bearer <worker key>"');
    const row = await findActiveWorkerKey(this.db, hashApiKey(match[1]!));
    if (!row) {
      const isApiKey = await this.apiKeys.principal(authorization, client).then(
        () => true,
        () => false,
      );
      if (isApiKey)
        throw notAuthorized(
          `the worker websocket needs a worker key, not a member's or agent's API key: ${HOW_TO_GET_A_WORKER_KEY}`,
        );
      throw authenticationRequired('the worker key is not valid (unknown or revoked)');
    }
    if (requestedTeam !== undefined && requestedTeam !== row.team_uid)
      throw notAuthorized(`this worker key belongs to another team than ${requestedTeam}`);
    return { keyUid: row.uid, teamUid: row.team_uid, workerPattern: row.worker_id };
  }
}

/** 403 unless the key was made for this worker ID. */
export function checkWorkerId(credential: WorkerCredential, workerId: string): void {
  if (!matchesWorkerPattern(credential.workerPattern, workerId)) {
    throw notAuthorized(
      `this worker key is for worker ID "${credential.workerPattern}", not "${workerId}"; ${HOW_TO_GET_A_WORKER_KEY}`,
    );
  }
}
