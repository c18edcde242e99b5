// The public surface of the secrets slice: other slices and the composition root import only this module.
export { registerSecretRoutes } from './http.js';
export { SECRET_NAME_PATTERN, SecretName } from './schemas.js';
export { SecretsService } from './service.js';
