import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ResolvedModel, isBuiltInHarness, type ModelCatalogue } from '../models/index.js';
import { HarnessStartError, PROXY_PROVIDERS, resolveRunModel } from '../execution/index.js';
import { ApiError, conflict, notAuthorized, notFound, upstreamUnreachable } from '../platform/http/errors.js';
import { forward } from './forward.js';
import type { ProxiedExecution } from './proxied-execution.js';

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
}

/**
 * Forwards a CLI's model request: the run's model is resolved again here, as when the run started (the team
 * secret in harness_auth_secrets, else the operator's key), and its key added. The sandbox only ever held the
 * task token, which stops working when the execution ends.
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
  // The provider's API only, below the root: no dot segments that would climb out of it.
  if (rest.split('/').some((segment) => segment === '.' || segment === '..') || rest.includes('\\'))
    throw notFound('no such provider path');
  if (PROXY_PROVIDERS[model.provider] !== provider) throw notFound(`this run's model is not served under ${provider}`);
  const base = model.baseUrl ?? DEFAULT_BASE_URLS[model.provider];
  if (base === undefined) throw notFound(`model ${model.id} has no endpoint`);
  const query = request.url.includes('?')
    ? new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1))
    : new URLSearchParams();
  // Gemini clients may send their key as ?key=; it is the task token, which the provider must not get.
  query.delete('key');
  const search = query.size > 0 ? `?${query}` : '';
  const url = `${clientRoot(model.provider, base)}/${rest}${search}`;
  try {
    return await forward(request, reply, {
      url,
      headers: credentialHeaders(model.provider, model.apiKey),
      errorBodies: true,
    });
  } catch (error) {
    if (error instanceof ApiError || reply.sent) throw error;
    throw upstreamUnreachable(`the endpoint of model ${model.id} could not be reached`);
  }
}
