// The public surface of the identities slice: other slices and the composition root import only this module.
export { registerAdminRoutes } from './admin/http.js';
export { AdminService } from './admin/service.js';
export { registerAgentRoutes } from './agents/http.js';
export { AgentsService } from './agents/service.js';
export type { AgentValues } from './agents/store.js';
export { AuthFailureThrottle } from './auth-throttle.js';
export { ApiKeyAuthenticator, selectTeam } from './authenticate.js';
export { bootstrapInstance, type BootstrapResult } from './bootstrap.js';
export { savedBy, type Caller } from './caller.js';
export { callerOf, principalOf, type Authenticator } from './request-auth.js';
export { findTeamMember, insertUser, roleInTeam, type Principal } from './store.js';
