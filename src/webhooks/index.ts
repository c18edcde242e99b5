// The public surface of the webhooks slice: other slices and the composition root import only this module.
export { registerWebhookRoutes } from './http.js';
export { registerIngressRoutes } from './ingress.js';
export { webhookRetention } from './retention.js';
export { MAX_WEBHOOKS_PER_FACTORY } from './schemas.js';
export { SIGNATURE_SCHEME_NAMES, type SignatureSchemeName } from './schemes/names.js';
export { deliveryQueue, WebhooksService, type FactoryDirectory, type SecretReader } from './service.js';
export { DELIVERIES_CHANNEL, type WebhookValues } from './store.js';
export { claimReplayKey, pruneReplayKeys, releaseReplayKey } from './store.js';
export { authFailureCounts, countAuthFailure } from './limits.js';
