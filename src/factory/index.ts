// The public surface of the factory slice: other slices and the composition root import only this module.
export { FactoryDefinitions } from './apply.js';
export { FactoryDispatch } from './dispatch.js';
export { registerDefinitionRoutes, registerFactoryRoutes } from './http.js';
export { registerPublicFactoryRoutes } from './public-http.js';
export { FactoriesService } from './service.js';
export { teamSkills } from './store.js';
