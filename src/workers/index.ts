// The public surface of the workers slice: other slices and the composition root import only this module.
export { registerWorkerRoutes } from './http.js';
export { WorkerHub } from './hub.js';
export { WorkerKeyAuthenticator } from './keys/authenticate.js';
export { WorkerKeysService } from './keys/service.js';
export { reportedSkills, workerConnected, workerConnectionCounts } from './store.js';
