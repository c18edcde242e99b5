import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { PROVIDER_KEY_ENV, type ModelDefinition } from '../../../models/catalogue.js';

/** The model has no usable credentials or endpoint; the message says what to set. */
export class ModelConfigurationError extends Error {
  override name = 'ModelConfigurationError';
}

/** The API key for a catalogue model: its own variable, else its provider's usual ones; undefined when none is set. */
export function apiKeyFor(model: ModelDefinition, env: Record<string, string | undefined>): string | undefined {
  const names = model.api_key_env ? [model.api_key_env] : model.provider === 'UNKNOWN' ? [] : PROVIDER_KEY_ENV[model.provider];
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  return undefined;
}

/**
 * The AI SDK model for a catalogue entry: OpenAI (Responses API), Anthropic (Messages), Google (Gemini), or any
 * OpenAI-compatible Chat Completions server for UNKNOWN. `base_url` overrides the provider's endpoint.
 */
export function languageModelFor(model: ModelDefinition, env: Record<string, string | undefined> = process.env): LanguageModel {
  const apiKey = apiKeyFor(model, env);
  const baseURL = model.base_url?.replace(/\/+$/, '') || undefined;
  const missing = () => new ModelConfigurationError(`No credentials for ${model.provider} model ${model.id}: set ${model.api_key_env ?? PROVIDER_KEY_ENV[model.provider as Exclude<typeof model.provider, 'UNKNOWN'>]?.join(' or ')}`);
  switch (model.provider) {
    case 'OPENAI':
      if (!apiKey) throw missing();
      return createOpenAI({ apiKey, baseURL }).responses(model.provider_model);
    case 'ANTHROPIC':
      if (!apiKey) throw missing();
      return createAnthropic({ apiKey, baseURL })(model.provider_model);
    case 'GOOGLE':
      if (!apiKey) throw missing();
      return createGoogleGenerativeAI({ apiKey, baseURL })(model.provider_model);
    case 'UNKNOWN':
      if (!baseURL) throw new ModelConfigurationError(`Model ${model.id} has provider UNKNOWN but no base_url for its OpenAI-compatible server`);
      return createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey, includeUsage: true }).chatModel(model.provider_model);
  }
}
