import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { hashApiKey, WORKER_KEY_PREFIX } from '../platform/crypto.js';
import { Batcher } from '../platform/db/batcher.js';
import { authenticationRequired, invalidRequest, notAuthorized } from '../platform/http/errors.js';
import type { Caller } from './caller.js';
import { findPrincipalsByKeyHashes, type Principal } from './store.js';

/**
 * Resolves `Authorization: Bearer <key>` to the user or agent it belongs to (401 otherwise).
 *
 * There is no cache: every request reads its key after it arrived, so a revoked key stops on the next request on
 * every replica. What saves the round trip under load is coalescing: the keys of the requests that arrive
 * together are looked up in one statement (one write to the socket and one query for all of them), which about
 * halves the statements a simple request makes. A request alone is looked up at once.
 */
export class ApiKeyAuthenticator {
  private readonly lookups: Batcher<string, Principal | undefined>;

  constructor(db: Kysely<DB>, planMaxAgents: number) {
    this.lookups = new Batcher({
      maxBatch: 200,
      maxInFlight: 2,
      write: async (keyHashes) => {
        const principals = await findPrincipalsByKeyHashes(db, [...new Set(keyHashes)], planMaxAgents);
        return keyHashes.map((keyHash) => principals.get(keyHash));
      },
    });
  }

  async principal(authorization: string | undefined): Promise<Principal> {
    if (!authorization) throw authenticationRequired('send an API key as "Authorization: Bearer <key>"');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw authenticationRequired('the Authorization header must be "Bearer <key>"');
    // Worker keys are not API keys (they live apart and are never found here); saying so beats "not valid".
    if (match[1]!.startsWith(WORKER_KEY_PREFIX))
      throw authenticationRequired(
        "a worker key opens only the worker websocket; the rest of the API needs a member's or agent's API key",
      );
    const principal = await this.lookups.submit(hashApiKey(match[1]!));
    if (!principal) throw authenticationRequired('the API key is not valid (unknown or revoked)');
    return principal;
  }
}

/**
 * The team a request acts for: the one named by `X-Team-Uid` (or its alias `X-Warp-Team-Uid`), else the
 * principal's only team.
 */
export function selectTeam(principal: Principal, requestedTeam: string | undefined): Caller {
  if (requestedTeam !== undefined) {
    const membership = principal.memberships.find((m) => m.team_uid === requestedTeam);
    if (!membership) throw notAuthorized(`you are not a member of team ${requestedTeam}`);
    return { principal, teamUid: membership.team_uid, role: membership.role };
  }
  const [only, ...others] = principal.memberships;
  if (!only) throw notAuthorized('this API key belongs to no team');
  if (others.length > 0) throw invalidRequest('you belong to several teams; name one with the X-Team-Uid header');
  return { principal, teamUid: only.team_uid, role: only.role };
}
