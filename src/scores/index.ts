// The public surface of the scores slice: other slices and the composition root import only this module.
export { registerScoreRoutes } from './http.js';
export { ScoresService } from './service.js';
