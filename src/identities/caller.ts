import type { Principal, Role } from './store.js';

/** An authenticated request: who is calling and for which of their teams. */
export interface Caller {
  principal: Principal;
  teamUid: string;
  role: Role;
}
