import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import {
  CreateScheduleBody,
  DeleteScheduleResponse,
  ScheduleIdParams,
  ScheduleItem,
  ScheduleList,
  UpdateScheduleBody,
} from './schemas.js';
import type { SchedulesService } from './service.js';

export function registerScheduleRoutes(parent: FastifyInstance, schedules: SchedulesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Scheduled agents'];
  const item = { 200: ScheduleItem, ...ProblemResponses };

  app.post(
    '/agent/schedules',
    {
      schema: {
        tags,
        summary: 'Create a scheduled agent',
        body: CreateScheduleBody,
        response: { 201: ScheduleItem, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await schedules.create(callerOf(request), request.body)),
  );
  app.get(
    '/agent/schedules',
    {
      schema: { tags, summary: 'List scheduled agents, by name', response: { 200: ScheduleList, ...ProblemResponses } },
    },
    async (request) => schedules.list(callerOf(request)),
  );
  app.get(
    '/agent/schedules/:scheduleId',
    { schema: { tags, summary: 'Get a scheduled agent', params: ScheduleIdParams, response: item } },
    async (request) => schedules.get(callerOf(request), request.params.scheduleId),
  );
  app.put(
    '/agent/schedules/:scheduleId',
    {
      schema: {
        tags,
        summary: 'Replace a scheduled agent',
        description: 'Every field but agent_config is required; omitted optional fields are cleared.',
        params: ScheduleIdParams,
        body: UpdateScheduleBody,
        response: item,
      },
    },
    async (request) => schedules.update(callerOf(request), request.params.scheduleId, request.body),
  );
  app.delete(
    '/agent/schedules/:scheduleId',
    {
      schema: {
        tags,
        summary: 'Delete a scheduled agent',
        params: ScheduleIdParams,
        response: { 200: DeleteScheduleResponse, ...ProblemResponses },
      },
    },
    async (request) => schedules.delete(callerOf(request), request.params.scheduleId),
  );
  app.post(
    '/agent/schedules/:scheduleId/pause',
    { schema: { tags, summary: 'Pause: no runs until resumed', params: ScheduleIdParams, response: item } },
    async (request) => schedules.pause(callerOf(request), request.params.scheduleId),
  );
  app.post(
    '/agent/schedules/:scheduleId/resume',
    { schema: { tags, summary: 'Resume from the next tick', params: ScheduleIdParams, response: item } },
    async (request) => schedules.resume(callerOf(request), request.params.scheduleId),
  );
}
