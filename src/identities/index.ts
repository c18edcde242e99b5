// The public surface of the identities slice: other slices and the composition root import only this module.
export { registerAdminRoutes } from './admin/http.js';
export { AdminService } from './admin/service.js';
export { registerAgentRoutes } from './agents/http.js';
export { AgentsService } from './agents/service.js';
export type { AgentValues } from './agents/store.js';
export { AuthFailureThrottle } from './auth-throttle.js';
export { ApiKeyAuthenticator, selectTeam } from './authenticate.js';
export { type BootstrapResult, bootstrapInstance } from './bootstrap.js';
export { type Caller, savedBy } from './caller.js';
export { type Authenticator, callerOf, principalOf } from './request-auth.js';
export { findTeamMember, insertUser, type Principal, roleInTeam } from './store.js';
