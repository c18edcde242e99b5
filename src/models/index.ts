// The public surface of the models slice: other slices and the composition root import only this module.
export {
  BUILT_IN_HARNESSES,
  BUILT_IN_MODELS,
  isBuiltInHarness,
  ModelCatalogue,
  presentCredentials,
  type BuiltInHarness,
  type CatalogueConfig,
  type ModelDefinition,
} from './catalogue.js';
export { registerModelRoutes } from './http.js';
export { ModelConfigurationError, resolveModel, type ResolvedModel } from './resolve.js';
export { authSecretName, requestedModelId } from './run-config.js';
