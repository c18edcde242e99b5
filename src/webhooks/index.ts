// The public surface of the webhooks slice: other slices and the composition root import only this module.
export { registerWebhookRoutes } from './http.js';
export { registerIngressRoutes } from './ingress.js';
export { authFailureCounts, countAuthFailure } from './limits.js';
export { webhookRetention } from './retention.js';
export { MAX_WEBHOOKS_PER_FACTORY } from './schemas.js';
export { SIGNATURE_SCHEME_NAMES, type SignatureSchemeName } from './schemes/names.js';
export { deliveryQueue, type FactoryDirectory, type SecretReader, WebhooksService } from './service.js';
export { claimReplayKey, DELIVERIES_CHANNEL, pruneReplayKeys, releaseReplayKey, type WebhookValues } from './store.js';
