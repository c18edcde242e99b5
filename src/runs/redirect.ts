import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { isActive } from './lifecycle/states.js';

/**
 * The two lookups a shared link is resolved with before anyone signs in (GET /agent/conversations/{id}/redirect and
 * GET /agent/sessions/{id}/redirect).
 *
 * What a session is in Hangar: the live execution of a run, watched at the run's session link
 * (`<public URL>/runs/<run_id>`); its ID is the run's ID. A conversation redirects to the session while its newest
 * run is executing (PENDING, CLAIMED or INPROGRESS); a session redirects to its run's conversation once the run is
 * no longer executing and has one. Nothing else is answered: not the team, the state, the title, nor whether an ID
 * exists. Both IDs are random UUIDs, so holding one is what lets a link be resolved; the route counts every lookup
 * that answers nothing against the failed-authentication budget of the address, so IDs cannot be scanned for.
 */

/** Whose runs a lookup may find: any team's for a caller without a key (the ID is the capability), else the caller's. */
export type LookupScope = { teamUid: string; principalUid: string } | 'any';

export class RunRedirects {
  constructor(private readonly db: Kysely<DB>) {}

  async conversationToSession(scope: LookupScope, conversationId: string): Promise<{ session_id?: string }> {
    const newest = await this.scoped(scope)
      .where('conversation_id', '=', conversationId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return newest && isActive(newest.state) ? { session_id: newest.id } : {};
  }

  async sessionToConversation(scope: LookupScope, sessionId: string): Promise<{ conversation_id?: string }> {
    const run = await this.scoped(scope).where('id', '=', sessionId).executeTakeFirst();
    return run && !isActive(run.state) && run.conversation_id ? { conversation_id: run.conversation_id } : {};
  }

  private scoped(scope: LookupScope) {
    const query = this.db.selectFrom('runs').select(['id', 'state', 'conversation_id']);
    if (scope === 'any') return query;
    return query
      .where('team_uid', '=', scope.teamUid)
      .where((eb) => eb.or([eb('scope_type', '=', 'Team'), eb('creator_uid', '=', scope.principalUid)]));
  }
}
