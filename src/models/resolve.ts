import { keyVariables, type ModelDefinition } from './catalogue.js';

/** The model a run uses, resolved from the catalogue and the run's credentials before the harness starts. */
export interface ResolvedModel {
  /** The catalogue ID (what `config.harness.model_id` names). */
  id: string;
  provider: 'OPENAI' | 'ANTHROPIC' | 'GOOGLE' | 'UNKNOWN';
  /** The name the provider's API knows the model by. */
  providerModel: string;
  /** The provider endpoint when the operator overrides it (no trailing slash), e.g. a local server. */
  baseUrl?: string;
  /** From the team secret named in `harness_auth_secrets`, else the operator's environment. */
  apiKey?: string;
}

/** The model has no usable credentials or endpoint; the message says what to set. */
export class ModelConfigurationError extends Error {
  override name = 'ModelConfigurationError';
}

/** The API key for a catalogue model from `env`; undefined when none is set. */
export function apiKeyFor(model: ModelDefinition, env: Record<string, string | undefined>): string | undefined {
  for (const name of keyVariables(model)) {
    const value = env[name];
    if (value) return value;
  }
  return undefined;
}

/**
 * A catalogue model with what a harness needs to call it: endpoint and key (`apiKey` when the run brings its own,
 * from a team secret; else the operator's environment). Throws ModelConfigurationError when it cannot be called.
 */
export function resolveModel(
  model: ModelDefinition,
  env: Record<string, string | undefined>,
  apiKey?: string,
): ResolvedModel {
  const key = apiKey ?? apiKeyFor(model, env);
  const baseUrl = model.base_url?.replace(/\/+$/, '') || undefined;
  if (model.provider === 'UNKNOWN') {
    if (!baseUrl)
      throw new ModelConfigurationError(
        `Model ${model.id} has provider UNKNOWN but no base_url for its OpenAI-compatible server`,
      );
  } else if (!key) {
    throw new ModelConfigurationError(
      `No credentials for ${model.provider} model ${model.id}: set ${keyVariables(model).join(' or ')}`,
    );
  }
  return {
    id: model.id,
    provider: model.provider,
    providerModel: model.provider_model,
    ...(baseUrl ? { baseUrl } : {}),
    ...(key ? { apiKey: key } : {}),
  };
}
