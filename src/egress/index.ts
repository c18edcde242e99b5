// The public surface of the egress slice: other slices and the composition root import only this module.
export { registerEgressRoutes } from './http.js';
