// The public surface of the overview slice: the composition root imports only this module.
export { registerOverviewRoutes } from './http.js';
export { OverviewService } from './service.js';
