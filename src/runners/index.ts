// The runners slice's public surface (issue 52, field 3): the service and routes for the composition root, the
// execution side's one function (executionShape), the recorded shape's type for the runs slice.
export { registerRunnerRoutes } from './http.js';
export { RUNNER_SANDBOXES, type RunnerBody, type RunnerShape } from './schemas.js';
export { RunnersService } from './service.js';
export { type ExecutionShape, executionShape, type RecordedRunner, type RunnerPolicy } from './shape.js';
