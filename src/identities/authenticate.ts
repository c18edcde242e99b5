import type { Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { authenticationRequired, invalidRequest, notAuthorized } from '../platform/http/errors.js';
import type { Caller } from './caller.js';
import { findPrincipalByApiKey } from './store.js';

/**
 * Resolves `Authorization: Bearer <key>` and the optional team header into a Caller. The team is the one
 * named by `X-Team-Uid` (or its alias `X-Warp-Team-Uid`), else the principal's only team.
 */
export async function authenticate(
  db: Kysely<DB>,
  authorization: string | undefined,
  requestedTeam: string | undefined,
): Promise<Caller> {
  if (!authorization) throw authenticationRequired('send an API key as "Authorization: Bearer <key>"');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw authenticationRequired('the Authorization header must be "Bearer <key>"');
  const principal = await findPrincipalByApiKey(db, match[1]!);
  if (!principal) throw authenticationRequired('the API key is not valid (unknown or revoked)');
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
