import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  activeModelMeter,
  HarnessStartError,
  type MeteredUsage,
  PROXY_PROVIDERS,
  resolveRunModel,
  type TeamBudgetState,
  teamHeld,
} from '../execution/index.js';
import {
  authSecretName,
  type BuiltInHarness,
  isBuiltInHarness,
  type ModelCatalogue,
  type ResolvedModel,
} from '../models/index.js';
import {
  ApiError,
  conflict,
  invalidRequest,
  methodNotAllowed,
  notAuthorized,
  notFound,
  upstreamUnreachable,
} from '../platform/http/errors.js';
import { type AnswerWatcher, forward } from './forward.js';
import {
  DEFAULT_OUTPUT_RESERVATION,
  FORWARDED_PATHS,
  type InferenceEndpoint,
  inferenceEndpoint,
  requestedOutputLimit,
} from './inference-endpoints.js';
import type { ProxiedExecution } from './proxied-execution.js';
import { UsageTap } from './usage-tap.js';

/** The providers' own endpoints, as the AI SDK takes them (with the API version). */
const DEFAULT_BASE_URLS: Record<ResolvedModel['provider'], string | undefined> = {
  ANTHROPIC: 'https://api.anthropic.com/v1',
  OPENAI: 'https://api.openai.com/v1',
  GOOGLE: 'https://generativelanguage.googleapis.com/v1beta',
  UNKNOWN: undefined,
};

/**
 * The root a provider's client appends its own paths to. Claude Code and the Gemini SDK add the API version
 * themselves (`/v1/messages`, `/v1beta/models/...`), so theirs is the base URL without it; OpenAI clients append
 * to the base URL as it is (`/responses`).
 */
export function clientRoot(provider: ResolvedModel['provider'], baseUrl: string): string {
  if (provider === 'ANTHROPIC') return baseUrl.replace(/\/v1$/, '');
  if (provider === 'GOOGLE') return baseUrl.replace(/\/v1(beta)?$/, '');
  return baseUrl;
}

/** How the provider takes its key. */
function credentialHeaders(provider: ResolvedModel['provider'], key: string | undefined): Record<string, string> {
  if (key === undefined) return {};
  if (provider === 'ANTHROPIC') return { 'x-api-key': key };
  if (provider === 'GOOGLE') return { 'x-goog-api-key': key };
  return { authorization: `Bearer ${key}` };
}

export interface ModelProxyDeps {
  catalogue: ModelCatalogue;
  /** The harness of a run that names none (the operator's default). */
  defaultHarness: string;
  readSecret(teamUid: string, name: string): Promise<string | null | undefined>;
  /** The team's monthly budget and this month's recorded spend (runs in flight included); null: no budget. */
  teamBudget(teamUid: string): Promise<TeamBudgetState | null>;
}

/**
 * Forwards a CLI's model call, metered: the run's model is resolved again here, as when the run started (the team
 * secret in harness_auth_secrets, else the operator's key), and its key added. Only inference paths go through
 * (inference-endpoints.ts), only for models of the catalogue the run may use, and only while the run's spend cap
 * and its team's budget have room: each call is admitted against its execution's meter (ModelMeter), and the
 * usage its answer reports is charged to the run as it arrives. The sandbox only ever held the task token, which
 * stops working when the execution ends.
 */
export async function proxyModelRequest(
  deps: ModelProxyDeps,
  execution: ProxiedExecution,
  provider: string,
  rest: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  // A debug turn after a failed setup does not record its harness on the run: it is the one the run asks for.
  const harness =
    execution.harness ?? (execution.agentConfig.harness as { type?: string } | undefined)?.type ?? deps.defaultHarness;
  if (!isBuiltInHarness(harness) || harness === 'oz')
    throw notAuthorized('only the coding-agent CLI harnesses call models through this proxy');
  const ownKey = authSecretName(harness, execution.agentConfig) !== undefined;
  let model: ResolvedModel;
  try {
    model = await resolveRunModel(
      deps.catalogue,
      harness,
      execution.agentConfig,
      async (name) => (await deps.readSecret(execution.teamUid, name)) ?? undefined,
    );
  } catch (error) {
    if (error instanceof HarnessStartError) throw conflict(error.message);
    throw error;
  }
  if (PROXY_PROVIDERS[model.provider] !== provider) throw notFound(`this run's model is not served under ${provider}`);
  // Inference only: a provider's files, batches or keys are no harness's business, and are not metered.
  const endpoint = inferenceEndpoint(provider, rest);
  if (!endpoint)
    throw notFound(
      `the model proxy forwards only inference calls (${FORWARDED_PATHS[provider] ?? 'none'}), not ${rest}`,
    );
  if (request.method !== 'POST') throw methodNotAllowed('model calls are POST requests', 'POST');
  const base = model.baseUrl ?? DEFAULT_BASE_URLS[model.provider];
  if (base === undefined) throw notFound(`model ${model.id} has no endpoint`);
  const body = requestBody(request);
  const named = endpoint.pathModel ?? body.model;
  if (typeof named !== 'string' || named === '') throw invalidRequest('the model call names no model');
  const modelId = allowedModel(deps.catalogue, harness, model, named, ownKey);
  // OpenAI reports a streamed chat completion's usage only when asked to.
  let sent: Buffer | undefined;
  if (endpoint.format === 'openai-chat' && body.stream === true) {
    const options = typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {};
    sent = Buffer.from(JSON.stringify({ ...body, stream_options: { ...options, include_usage: true } }));
  }

  const meter = activeModelMeter(execution.runId, execution.executionId);
  if (!meter)
    throw conflict(
      "this execution's agent does not run on this server: its model calls are metered where it runs, and go there",
    );
  const estimate = endpoint.billed ? estimateOf(deps.catalogue, modelId, endpoint, body, request) : FREE;
  const team = await deps.teamBudget(execution.teamUid);
  // Synchronous from here to the forward's start: calls arriving together are admitted one after another.
  const reservation = meter.admit(estimate, team, teamHeld(execution.teamUid));

  const query = request.url.includes('?')
    ? new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1))
    : new URLSearchParams();
  // Gemini clients may send their key as ?key=; it is the task token, which the provider must not get.
  query.delete('key');
  const search = query.size > 0 ? `?${query}` : '';
  const url = `${clientRoot(model.provider, base)}/${rest}${search}`;
  let billable = false;
  let tap: UsageTap | undefined;
  const watch: AnswerWatcher = {
    answered(status, contentType) {
      billable = endpoint.billed && status >= 200 && status < 300;
      if (!billable) return false;
      tap = new UsageTap(endpoint.format, contentType, (tokens) =>
        reservation.charge({
          input_tokens: tokens.input,
          output_tokens: tokens.output,
          cost: deps.catalogue.cost(modelId, tokens.input, tokens.output),
        }),
      );
      return true;
    },
    chunk: (chunk) => tap?.push(chunk),
    ended(complete) {
      if (complete) tap?.end();
      reservation.settle(billable);
    },
  };
  try {
    return await forward(request, reply, {
      url,
      headers: credentialHeaders(model.provider, model.apiKey),
      errorBodies: true,
      watch,
      ...(sent ? { body: sent } : {}),
    });
  } catch (error) {
    reservation.settle(billable);
    if (error instanceof ApiError || reply.sent) throw error;
    throw upstreamUnreachable(`the endpoint of model ${model.id} could not be reached`);
  }
}

const FREE: MeteredUsage = { input_tokens: 0, output_tokens: 0, cost: 0 };

/** The call's JSON body (every inference call has one). */
function requestBody(request: FastifyRequest): Record<string, unknown> {
  const raw = Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidRequest('a model call has a JSON body');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw invalidRequest('a model call has a JSON object as its body');
  return parsed as Record<string, unknown>;
}

/**
 * The catalogue model a call may name: the run's own, or another model of the catalogue the run could be given
 * (enabled, of the harness's provider) served at the same endpoint with the same key (Gemini CLI's side calls
 * use a Flash model). Anything else is refused: a model the operator disabled, or one the catalogue cannot price.
 */
function allowedModel(
  catalogue: ModelCatalogue,
  harness: BuiltInHarness,
  runModel: ResolvedModel,
  named: string,
  ownKey: boolean,
): string {
  const own = catalogue.find(runModel.id);
  const candidates = catalogue.models.filter(
    (entry) =>
      entry.provider_model === named &&
      entry.provider === runModel.provider &&
      (entry.base_url?.replace(/\/+$/, '') || undefined) === runModel.baseUrl &&
      entry.api_key_env === own?.api_key_env,
  );
  const entry = candidates.find((candidate) => candidate.id === runModel.id) ?? candidates[0];
  if (!entry)
    throw notAuthorized(
      `model ${named} is not one this run may use: the proxy forwards calls for the run's model (${runModel.providerModel}) and the catalogue's enabled models at its endpoint`,
    );
  const refusal = catalogue.refusal(entry.id, harness, ownKey);
  if (refusal) throw refusal;
  return entry.id;
}

/**
 * What a call is reserved at before it goes: its body's bytes as input tokens (a token is about four bytes of
 * text, and JSON adds more), and the output it asks for at most, or DEFAULT_OUTPUT_RESERVATION when it sets no
 * limit, at the model's prices.
 */
function estimateOf(
  catalogue: ModelCatalogue,
  modelId: string,
  endpoint: InferenceEndpoint,
  body: Record<string, unknown>,
  request: FastifyRequest,
): MeteredUsage {
  const bytes = Buffer.isBuffer(request.body) ? request.body.length : 0;
  const input = Math.ceil(bytes / 4);
  const output = requestedOutputLimit(endpoint.format, body) ?? DEFAULT_OUTPUT_RESERVATION;
  return { input_tokens: input, output_tokens: output, cost: catalogue.cost(modelId, input, output) };
}
