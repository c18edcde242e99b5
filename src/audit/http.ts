import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { notAuthorized } from '../platform/http/errors.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { AdminAuditQuery, AuditList, AuditQuery } from './schemas.js';
import type { AuditLog } from './service.js';

/**
 * The audit log, read only (no route changes or deletes an entry): a team's admins read their team's at /audit,
 * instance administrators everyone's at /admin/audit (optionally one team's). Paged newest first with the runs
 * list's cursor convention (`limit`, `cursor`, `page_info.next_cursor`).
 */
export function registerAuditRoutes(parent: FastifyInstance, audit: AuditLog): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Audit log'];
  app.get(
    '/audit',
    {
      schema: {
        tags,
        summary: "The team's audit log, newest first (team admins)",
        querystring: AuditQuery,
        response: { 200: AuditList, ...ProblemResponses },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      if (caller.role !== 'admin') throw notAuthorized("only the team's admins read its audit log");
      return audit.list(request.query, caller.teamUid);
    },
  );
  app.get(
    '/admin/audit',
    {
      config: { adminOnly: true },
      schema: {
        tags,
        summary: 'The whole audit log, newest first (instance administrators)',
        querystring: AdminAuditQuery,
        response: { 200: AuditList, ...ProblemResponses },
      },
    },
    async (request) => audit.list(request.query, request.query.team_uid),
  );
}
