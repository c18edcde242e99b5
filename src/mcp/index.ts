// The public surface of the mcp slice: other slices and the composition root import only this module.
export type { ResolvedDefinition } from './definition.js';
export { registerMcpServerRoutes } from './http.js';
export { McpServersService } from './service.js';
