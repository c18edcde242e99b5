import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';

/** Whose runs a caller may see: the team's runs, plus the caller's own personal runs in that team. */
export interface Visibility {
  teamUid: string;
  principalUid: string;
}

export function visible(eb: ExpressionBuilder<DB, 'runs'>, who: Visibility): Expression<SqlBool> {
  return eb.and([
    eb('runs.team_uid', '=', who.teamUid),
    eb.or([eb('runs.scope_type', '=', 'Team'), eb('runs.creator_uid', '=', who.principalUid)]),
  ]);
}

/** The runs `caller` may see. */
export function callerVisibility(caller: Caller): Visibility {
  return { teamUid: caller.teamUid, principalUid: caller.principal.uid };
}
