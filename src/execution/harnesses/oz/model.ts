import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { type ModelDefinition, type ResolvedModel, resolveModel } from '../../../models/index.js';

/**
 * The AI SDK model for a resolved catalogue model: OpenAI (Responses API), Anthropic (Messages), Google (Gemini),
 * or any OpenAI-compatible Chat Completions server for UNKNOWN. `baseUrl` overrides the provider's endpoint.
 */
export function languageModel(model: ResolvedModel): LanguageModel {
  const { apiKey, baseUrl: baseURL } = model;
  switch (model.provider) {
    case 'OPENAI':
      return createOpenAI({ apiKey, baseURL }).responses(model.providerModel);
    case 'ANTHROPIC':
      return createAnthropic({ apiKey, baseURL })(model.providerModel);
    case 'GOOGLE':
      return createGoogleGenerativeAI({ apiKey, baseURL })(model.providerModel);
    case 'UNKNOWN':
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: baseURL!,
        apiKey,
        includeUsage: true,
      }).chatModel(model.providerModel);
  }
}

/** The AI SDK model for a catalogue entry with the key from `env`; throws ModelConfigurationError when it has none. */
export function languageModelFor(
  model: ModelDefinition,
  env: Record<string, string | undefined> = process.env,
): LanguageModel {
  return languageModel(resolveModel(model, env));
}
