// The public surface of the audit slice: other slices and the composition root import only this module.
export { AUDITED_ROUTES } from './actions.js';
export { recordAuditedRoutes, routeKey } from './hook.js';
export { registerAuditRoutes } from './http.js';
export { auditRetention } from './retention.js';
export { AuditLog } from './service.js';
export { auditSettingsChanges } from './settings.js';
