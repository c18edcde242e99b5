import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { InstanceStatus, instanceStatus } from './status.js';

/**
 * `GET /admin/status`: what `hangar doctor` prints, for instance administrators (the dashboard's Status page). It
 * probes this server's machine: the sandbox, the workspace directory, the git host.
 */
export function registerStatusRoute(parent: FastifyInstance, config: Config, dashboardUrl: () => string): void {
  parent.withTypeProvider<TypeBoxTypeProvider>().get(
    '/admin/status',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Administration'],
        summary: "The instance's status",
        description:
          'The summary the server prints at start (sandbox and why, harnesses, usable models, config file, data directory, database, dashboard URL) and the checks of `hangar doctor`.',
        response: { 200: InstanceStatus, ...ProblemResponses },
      },
    },
    async () => instanceStatus(config, { dashboardUrl: dashboardUrl() }),
  );
}
