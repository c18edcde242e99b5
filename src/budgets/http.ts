import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { SetBudgetBody, TeamParams, TeamSpend } from './schemas.js';
import type { BudgetsService } from './service.js';

/** Budgets: instance administrators set them; a team's members read their team's spend and budget. */
export function registerBudgetRoutes(parent: FastifyInstance, budgets: BudgetsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Budgets'];
  const adminOnly = { adminOnly: true };
  const response = { 200: TeamSpend, ...ProblemResponses };
  app.get(
    '/team/spend',
    { schema: { tags, summary: "The caller's team: this month's spend and its budget", response } },
    async (request) => budgets.spend(callerOf(request).teamUid),
  );
  app.get(
    '/admin/teams/:teamUid/budget',
    { config: adminOnly, schema: { tags, summary: "A team's month spend and budget", params: TeamParams, response } },
    async (request) => budgets.spend(request.params.teamUid),
  );
  app.put(
    '/admin/teams/:teamUid/budget',
    {
      config: adminOnly,
      schema: { tags, summary: "Set a team's monthly budget", params: TeamParams, body: SetBudgetBody, response },
    },
    async (request) => budgets.set(request.params.teamUid, request.body),
  );
  app.delete(
    '/admin/teams/:teamUid/budget',
    { config: adminOnly, schema: { tags, summary: "Remove a team's budget", params: TeamParams, response } },
    async (request) => budgets.clear(request.params.teamUid),
  );
}
