/**
 * The provider paths the model proxy forwards: the inference calls the coding-agent CLIs make (Claude Code's
 * `/v1/messages`, Codex's `/responses`, Gemini CLI's `:streamGenerateContent`, and their token counts), nothing
 * else of a provider's API (files, batches, fine-tuning, keys), and what each call's answer says it used.
 */

/** How a call's answer reports its usage. */
export type UsageFormat = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

export interface InferenceEndpoint {
  format: UsageFormat;
  /** Whether the provider bills the call (a token count does not). */
  billed: boolean;
  /** The model the path names (Gemini's `models/<model>:...`); else the body's `model`. */
  pathModel?: string;
}

const OPENAI_PATHS: Record<string, InferenceEndpoint> = {
  'chat/completions': { format: 'openai-chat', billed: true },
  responses: { format: 'openai-responses', billed: true },
};

const GEMINI_PATH = /^v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** The endpoint `rest` (the path below the provider's segment) names, or undefined when the proxy does not forward it. */
export function inferenceEndpoint(provider: string, rest: string): InferenceEndpoint | undefined {
  const path = rest.replace(/\/+$/, '');
  switch (provider) {
    case 'anthropic':
      if (path === 'v1/messages') return { format: 'anthropic', billed: true };
      if (path === 'v1/messages/count_tokens') return { format: 'anthropic', billed: false };
      return undefined;
    case 'openai':
    case 'openai-compatible':
      return Object.hasOwn(OPENAI_PATHS, path) ? OPENAI_PATHS[path] : undefined;
    case 'google': {
      const match = GEMINI_PATH.exec(path);
      if (!match) return undefined;
      let model: string;
      try {
        model = decodeURIComponent(match[1]!);
      } catch {
        return undefined;
      }
      return { format: 'gemini', billed: match[2] !== 'countTokens', pathModel: model };
    }
    default:
      return undefined;
  }
}

/** The paths named in the proxy's refusal of any other, per provider segment. */
export const FORWARDED_PATHS: Record<string, string> = {
  anthropic: 'v1/messages, v1/messages/count_tokens',
  openai: 'chat/completions, responses',
  'openai-compatible': 'chat/completions, responses',
  google: 'v1beta/models/<model>:generateContent, :streamGenerateContent, :countTokens',
};

/** Output tokens reserved for a call whose body sets no limit (the reservation is released when its usage is known). */
export const DEFAULT_OUTPUT_RESERVATION = 4096;

type Body = Record<string, unknown>;

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/** The most output tokens the call asks for, in its provider's field; undefined when it sets none. */
export function requestedOutputLimit(format: UsageFormat, body: Body): number | undefined {
  switch (format) {
    case 'anthropic':
      return count(body.max_tokens);
    case 'openai-chat':
      return count(body.max_completion_tokens) ?? count(body.max_tokens);
    case 'openai-responses':
      return count(body.max_output_tokens);
    case 'gemini':
      return count((body.generationConfig as Body | undefined)?.maxOutputTokens);
  }
}

/** Tokens an answer (or one event of its stream) reports; absent fields were not in it. */
export interface ReportedTokens {
  input?: number;
  output?: number;
}

function sum(...values: Array<number | undefined>): number | undefined {
  const present = values.filter((value) => value !== undefined);
  return present.length === 0 ? undefined : present.reduce((total, value) => total + value, 0);
}

/**
 * The tokens one JSON answer, or one event of a streamed answer, reports. The figures of a stream are cumulative
 * (Anthropic's message_start has the input, message_delta the output so far; Gemini repeats its usageMetadata;
 * OpenAI's come once at the end), so the reader keeps the largest of each. Cached and cache-writing input counts
 * as input, and reasoning as output, at the catalogue's input and output prices.
 */
export function reportedTokens(format: UsageFormat, event: unknown): ReportedTokens {
  if (typeof event !== 'object' || event === null) return {};
  const data = event as Body;
  switch (format) {
    case 'anthropic': {
      const usage = (data.usage ?? (data.message as Body | undefined)?.usage) as Body | undefined;
      if (!usage || typeof usage !== 'object') return {};
      return {
        input: sum(
          count(usage.input_tokens),
          count(usage.cache_creation_input_tokens),
          count(usage.cache_read_input_tokens),
        ),
        output: count(usage.output_tokens),
      };
    }
    case 'openai-chat': {
      const usage = data.usage as Body | undefined;
      if (!usage || typeof usage !== 'object') return {};
      return { input: count(usage.prompt_tokens), output: count(usage.completion_tokens) };
    }
    case 'openai-responses': {
      const usage = (data.usage ?? (data.response as Body | undefined)?.usage) as Body | undefined;
      if (!usage || typeof usage !== 'object') return {};
      return { input: count(usage.input_tokens), output: count(usage.output_tokens) };
    }
    case 'gemini': {
      const usage = data.usageMetadata as Body | undefined;
      if (!usage || typeof usage !== 'object') return {};
      return {
        input: sum(count(usage.promptTokenCount), count(usage.toolUsePromptTokenCount)),
        output: sum(count(usage.candidatesTokenCount), count(usage.thoughtsTokenCount)),
      };
    }
  }
}
