// The public surface of the artifacts slice: other slices and the composition root import only this module.
export { registerArtifactRoutes } from './http.js';
export { ARTIFACT_TYPES, type ArtifactResponse, type ReportArtifactBody, type UploadArtifactQuery } from './schemas.js';
export { ArtifactsService, DOWNLOAD_LINK_SECONDS, type RunExecution } from './service.js';
export { pullRequestUrls } from './store.js';
