import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

/**
 * Interface operations this version of Hangar does not implement yet. They answer 422 operation_not_supported
 * (rather than 404) so a client can tell "not here yet" from "wrong URL". Each entry leaves this list when its
 * slice lands; the README lists the same operations.
 */
const NOT_BUILT: Array<[method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, what: string]> = [];

export function registerNotBuiltRoutes(api: FastifyInstance): void {
  for (const [method, url, what] of NOT_BUILT) {
    api.route({
      method,
      url,
      schema: { hide: true },
      handler: async () => {
        throw new ApiError(422, 'operation_not_supported', `${what}: not available in this version of Hangar yet`);
      },
    });
  }
}
