// The public surface of the models slice: other slices and the composition root import only this module.
export {
  BUILT_IN_HARNESSES,
  BUILT_IN_MODELS,
  type BuiltInHarness,
  type CatalogueConfig,
  isBuiltInHarness,
  ModelCatalogue,
  type ModelDefinition,
  presentCredentials,
} from './catalogue.js';
export { registerModelRoutes } from './http.js';
export { ModelConfigurationError, type ResolvedModel, resolveModel } from './resolve.js';
export { authSecretName, requestedModelId } from './run-config.js';
