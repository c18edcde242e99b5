import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type Authenticator, callerOf } from '../identities/index.js';
import { ProblemResponses } from '../platform/http/openapi.js';
import { CreateRunResponse, RunIdParams } from '../runs/index.js';
import {
  CreateScorerBody,
  JudgeBody,
  Scorer,
  ScorerList,
  ScorerParams,
  ScoresBody,
  ScoresResponse,
} from './schemas.js';
import type { ScoresCredential, ScoresService } from './service.js';

export interface ScoreRouteDeps {
  scores: ScoresService;
  authenticate: Authenticator;
  /** Reads a task token: the run and execution it was issued for, or null. */
  verifyTaskToken(token: string): { runId: string; executionId: number } | null;
}

/** Scorers, judge dispatch, and the verdicts a judge run sends with its own task token. */
export function registerScoreRoutes(parent: FastifyInstance, deps: ScoreRouteDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { scores } = deps;

  app.post(
    '/agent/scorers',
    {
      schema: {
        tags: ['Scores'],
        summary: 'Define a scorer: rubric, labels with scores, passing score',
        body: CreateScorerBody,
        response: { 201: Scorer, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await scores.createScorer(callerOf(request), request.body)),
  );
  app.get(
    '/agent/scorers',
    {
      schema: {
        tags: ['Scores'],
        summary: "The team's scorers, by name",
        response: { 200: ScorerList, ...ProblemResponses },
      },
    },
    async (request) => scores.listScorers(callerOf(request)),
  );
  app.get(
    '/agent/scorers/:scorerId',
    {
      schema: {
        tags: ['Scores'],
        summary: 'One scorer',
        params: ScorerParams,
        response: { 200: Scorer, ...ProblemResponses },
      },
    },
    async (request) => scores.getScorer(callerOf(request), request.params.scorerId),
  );
  app.delete(
    '/agent/scorers/:scorerId',
    {
      schema: {
        tags: ['Scores'],
        summary: 'Delete a scorer and the verdicts given with it',
        params: ScorerParams,
        response: { 204: Type.Null(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await scores.deleteScorer(callerOf(request), request.params.scorerId);
      return reply.code(204).send(null);
    },
  );
  app.post(
    '/agent/runs/:runId/judge',
    {
      schema: {
        tags: ['Scores'],
        summary: 'Dispatch a judge run that scores this run',
        description:
          'Creates a run with source RUN_SCORER (a child of this run) whose prompt holds the run and the rubrics; it sends its verdicts to /agent/runs/{runId}/scores.',
        params: RunIdParams,
        body: JudgeBody,
        response: { 200: CreateRunResponse, ...ProblemResponses },
      },
    },
    async (request) => scores.judge(callerOf(request), request.params.runId, request.body),
  );

  const credential = async (request: FastifyRequest): Promise<ScoresCredential> => {
    const authorization = request.headers.authorization;
    if (authorization === undefined) return { kind: 'none' };
    const claim = authorization.startsWith('Bearer ')
      ? deps.verifyTaskToken(authorization.slice('Bearer '.length).trim())
      : null;
    if (claim) return { kind: 'task', ...claim };
    // Not a task token: a valid API key is someone who is not the judge (403); anything else fails here (401).
    await deps.authenticate.principal(authorization, request.ip);
    return { kind: 'api_key' };
  };
  app.post(
    '/agent/runs/:runId/scores',
    {
      schema: {
        tags: ['Scores'],
        summary: 'Verdicts of the judge run scoring this run (its task token)',
        description:
          '200 when every verdict was accepted, 206 when some were rejected; each result says which and why.',
        params: RunIdParams,
        body: ScoresBody,
        response: { 200: ScoresResponse, 206: ScoresResponse, ...ProblemResponses },
      },
      config: { public: true },
    },
    async (request, reply) => {
      const outcome = await scores.submit(await credential(request), request.params.runId, request.body.results);
      return reply.code(outcome.status).send(outcome.body);
    },
  );
}
