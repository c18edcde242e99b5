import {
  type ApiError,
  integrationDisabled,
  integrationNotConfigured,
  invalidRequest,
} from '../platform/http/errors.js';

/**
 * The model catalogue: which models runs may ask for, what they cost, and whether each can be used right now.
 * It comes from the operator's file (`models`, `default_model`, `disabled_models` in HANGAR_CONFIG), or from the
 * built-in list below; a model is usable when its provider's credentials are in Hangar's environment.
 */

export type ModelProvider = 'OPENAI' | 'ANTHROPIC' | 'GOOGLE' | 'UNKNOWN';

export interface ModelDefinition {
  id: string;
  display_name: string;
  provider: ModelProvider;
  /** The name the provider's API knows the model by. */
  provider_model: string;
  /** The provider's API base; required for UNKNOWN (any OpenAI-compatible server such as Ollama or vLLM). */
  base_url?: string;
  /** Environment variable holding the API key; the provider's usual one when absent (none for UNKNOWN). */
  api_key_env?: string;
  vision_supported: boolean;
  reasoning_level?: string;
  description?: string;
  /** USD per million tokens. */
  cost: { input: number; output: number };
}

/** Where each provider's key is usually found. */
export const PROVIDER_KEY_ENV: Record<Exclude<ModelProvider, 'UNKNOWN'>, string[]> = {
  OPENAI: ['OPENAI_API_KEY'],
  ANTHROPIC: ['ANTHROPIC_API_KEY'],
  GOOGLE: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY'],
};

/** The harnesses built into Hangar: its own agent and the coding-agent CLIs it can drive. */
export const BUILT_IN_HARNESSES = ['oz', 'claude', 'codex', 'gemini'] as const;
export type BuiltInHarness = (typeof BUILT_IN_HARNESSES)[number];

export function isBuiltInHarness(name: string): name is BuiltInHarness {
  return (BUILT_IN_HARNESSES as readonly string[]).includes(name);
}

/** The providers whose API each built-in harness can call. */
export const HARNESS_PROVIDERS: Record<BuiltInHarness, ModelProvider[]> = {
  oz: ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'UNKNOWN'],
  claude: ['ANTHROPIC'],
  codex: ['OPENAI'],
  gemini: ['GOOGLE'],
};

/** The variables a catalogue model's key may be in: its own, else its provider's usual ones (none for UNKNOWN). */
export function keyVariables(model: ModelDefinition): string[] {
  if (model.api_key_env) return [model.api_key_env];
  return model.provider === 'UNKNOWN' ? [] : PROVIDER_KEY_ENV[model.provider];
}

/**
 * A sensible starting list with list prices at the time of writing (USD per million input / output tokens);
 * operators with other contracts set their own with `models` in HANGAR_CONFIG.
 */
export const BUILT_IN_MODELS: ModelDefinition[] = [
  {
    id: 'claude-sonnet-4',
    display_name: 'Claude Sonnet 4',
    provider: 'ANTHROPIC',
    provider_model: 'claude-sonnet-4-20250514',
    vision_supported: true,
    cost: { input: 3, output: 15 },
  },
  {
    id: 'claude-opus-4.1',
    display_name: 'Claude Opus 4.1',
    provider: 'ANTHROPIC',
    provider_model: 'claude-opus-4-1-20250805',
    vision_supported: true,
    cost: { input: 15, output: 75 },
  },
  {
    id: 'claude-haiku-3.5',
    display_name: 'Claude Haiku 3.5',
    provider: 'ANTHROPIC',
    provider_model: 'claude-3-5-haiku-20241022',
    vision_supported: true,
    cost: { input: 0.8, output: 4 },
  },
  {
    id: 'gpt-4.1',
    display_name: 'GPT-4.1',
    provider: 'OPENAI',
    provider_model: 'gpt-4.1',
    vision_supported: true,
    cost: { input: 2, output: 8 },
  },
  {
    id: 'gpt-4.1-mini',
    display_name: 'GPT-4.1 mini',
    provider: 'OPENAI',
    provider_model: 'gpt-4.1-mini',
    vision_supported: true,
    cost: { input: 0.4, output: 1.6 },
  },
  {
    id: 'o4-mini',
    display_name: 'o4-mini',
    provider: 'OPENAI',
    provider_model: 'o4-mini',
    vision_supported: true,
    reasoning_level: 'medium',
    cost: { input: 1.1, output: 4.4 },
  },
  {
    id: 'gemini-2.5-pro',
    display_name: 'Gemini 2.5 Pro',
    provider: 'GOOGLE',
    provider_model: 'gemini-2.5-pro',
    vision_supported: true,
    reasoning_level: 'high',
    cost: { input: 1.25, output: 10 },
  },
  {
    id: 'gemini-2.5-flash',
    display_name: 'Gemini 2.5 Flash',
    provider: 'GOOGLE',
    provider_model: 'gemini-2.5-flash',
    vision_supported: true,
    cost: { input: 0.3, output: 2.5 },
  },
];

export interface CatalogueConfig {
  /** The operator's list; undefined: the built-in one. */
  models?: ModelDefinition[];
  defaultModel?: string;
  /** Turned off by the operator. */
  disabledModels: string[];
}

export type Availability =
  | { usable: true }
  /** `why`: turned off by the operator, or no credentials for its provider. */
  | { usable: false; reason: 'ADMIN_DISABLED'; why: 'disabled' | 'credentials'; detail: string };

export class ModelCatalogue {
  readonly models: ModelDefinition[];
  private readonly byId: Map<string, ModelDefinition>;
  private readonly disabled: Set<string>;

  constructor(
    config: CatalogueConfig,
    /** The provider key variables set in Hangar's environment, with their values (see presentCredentials). */
    readonly keys: Readonly<Record<string, string>>,
  ) {
    this.models = config.models ?? BUILT_IN_MODELS;
    this.byId = new Map(this.models.map((model) => [model.id, model]));
    this.disabled = new Set(config.disabledModels);
    const preferred =
      config.defaultModel !== undefined && this.byId.has(config.defaultModel) ? config.defaultModel : undefined;
    this.defaultModelId =
      preferred ?? this.models.find((model) => this.availability(model).usable)?.id ?? this.models[0]?.id ?? null;
  }

  /** The configured default, else the first usable model. */
  readonly defaultModelId: string | null;

  find(id: string): ModelDefinition | undefined {
    return this.byId.get(id);
  }

  /** Whether the model can be used now, and if not, why in words a person can act on. */
  availability(model: ModelDefinition): Availability {
    if (this.disabled.has(model.id)) {
      return {
        usable: false,
        reason: 'ADMIN_DISABLED',
        why: 'disabled',
        detail: 'An administrator turned this model off (disabled_models in the server configuration).',
      };
    }
    const names = keyVariables(model);
    if (names.length > 0 && !names.some((name) => this.keys[name])) {
      return {
        usable: false,
        reason: 'ADMIN_DISABLED',
        why: 'credentials',
        detail: `No credentials for ${model.provider}: set ${names.join(' or ')} in the server's environment.`,
      };
    }
    return { usable: true };
  }

  /**
   * Why a run may not use this model, as the API error to answer; null when it may. With `harness`, the model must
   * speak that harness's protocol; `ownKey`: the run brings its key (a team secret), so Hangar's need not be set.
   */
  refusal(id: string, harness?: BuiltInHarness, ownKey = false): ApiError | null {
    const model = this.byId.get(id);
    if (!model)
      return invalidRequest(
        `model ${id} is not in this server's catalogue; \`hangar models\` (GET /agent/models) lists the models`,
      );
    if (harness && !HARNESS_PROVIDERS[harness].includes(model.provider)) {
      return invalidRequest(
        `model ${id} is a ${model.provider} model, but the ${harness} harness works with ${HARNESS_PROVIDERS[harness].join(' or ')} models`,
      );
    }
    const availability = this.availability(model);
    if (availability.usable || (ownKey && availability.why === 'credentials')) return null;
    return availability.why === 'disabled'
      ? integrationDisabled(`model ${id} cannot be used: ${availability.detail}`)
      : integrationNotConfigured(`model ${id} cannot be used: ${availability.detail}`);
  }

  /**
   * The model a run of `harness` uses when it names none: the default when the harness can use it, else the first
   * usable model it can, else the first it can at all (whose refusal then says what is missing).
   */
  defaultFor(harness: BuiltInHarness): ModelDefinition | undefined {
    const fitting = this.models.filter((model) => HARNESS_PROVIDERS[harness].includes(model.provider));
    const preferred = fitting.find((model) => model.id === this.defaultModelId);
    if (preferred && this.availability(preferred).usable) return preferred;
    return fitting.find((model) => this.availability(model).usable) ?? preferred ?? fitting[0];
  }

  /** USD for the tokens at the model's prices; undefined for a model not in the catalogue. */
  cost(id: string, inputTokens: number, outputTokens: number): number | undefined {
    const model = this.byId.get(id);
    if (!model) return undefined;
    return (inputTokens * model.cost.input + outputTokens * model.cost.output) / 1_000_000;
  }
}

/** The variables among those the catalogue may need that are set (to a non-empty value) in `env`, with their values. */
export function presentCredentials(
  config: CatalogueConfig,
  env: Record<string, string | undefined>,
): Record<string, string> {
  const wanted = new Set([
    ...Object.values(PROVIDER_KEY_ENV).flat(),
    ...(config.models ?? []).flatMap((model) => (model.api_key_env ? [model.api_key_env] : [])),
  ]);
  return Object.fromEntries([...wanted].flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
}
