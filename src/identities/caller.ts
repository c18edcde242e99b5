import type { Principal, Role } from './store.js';

/** An authenticated request: who is calling and for which of their teams. */
export interface Caller {
  principal: Principal;
  teamUid: string;
  role: Role;
}

/**
 * The caller a background job acts as: the user who saved the schedule or automation, in its team. Runs are
 * checked and owned as if that user had created them.
 */
export function savedBy(teamUid: string, userUid: string): Caller {
  return {
    principal: { type: 'user', uid: userUid, displayName: '', email: null, isAdmin: false, memberships: [] },
    teamUid,
    role: 'member',
  };
}
