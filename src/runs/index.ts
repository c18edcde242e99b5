// The public surface of the runs slice: other slices and the composition root import only this module.
export { RunActivity } from './activity.js';
export { registerRunCommands } from './cli.js';
export { registerRunRoutes } from './http.js';
export { metadataProblem } from './metadata.js';
export { registerRunOutputRoutes } from './output-http.js';
export { RunOutputs, TRANSCRIPT_LINK_SECONDS } from './output.js';
export { AgentConfig, CreateRunResponse, HARNESS_TYPES, RunIdParams, type RunItem } from './schemas.js';
export { RunsService, type AgentDirectory, type RunRequest } from './service.js';
