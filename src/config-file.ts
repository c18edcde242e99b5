import fs from 'node:fs';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import YAML from 'yaml';
import {
  BUILT_IN_HARNESSES,
  BUILT_IN_MODELS,
  type BuiltInHarness as BuiltInHarnessName,
  type CatalogueConfig,
  isBuiltInHarness,
  type ModelDefinition,
} from './models/index.js';

/**
 * The operator's YAML file (`HANGAR_CONFIG`): what API callers must never define themselves, such as the
 * commands that run agents. `${NAME}` in an `env` value is replaced by Hangar's own environment variable NAME,
 * so keys stay out of the file. A command argument starting with `./` or `../` is relative to the file.
 */
const HARNESS_NAME = '^[a-z0-9][a-z0-9_-]{0,62}$';

const CommandHarness = Type.Object(
  {
    command: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    env: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String())),
    timeout_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 60 })),
    network: Type.Optional(Type.Boolean()),
    accepts_input: Type.Optional(Type.Boolean()),
    output: Type.Optional(Type.Union([Type.Literal('events'), Type.Literal('text')])),
  },
  { additionalProperties: false },
);

/** Settings of the built-in harnesses (oz and the coding-agent CLIs); each may be left out. */
const BuiltInHarness = Type.Object(
  {
    timeout_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 60 })),
    /** Under bwrap: share the host network with the agent's commands (the CLIs always get it: they call the model). */
    network: Type.Optional(Type.Boolean()),
    /** oz: model calls allowed per execution. */
    max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
    /** The CLIs: the executable, when it is not on PATH. */
    path: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const ModelEntry = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$' }),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    provider: Type.Union([
      Type.Literal('OPENAI'),
      Type.Literal('ANTHROPIC'),
      Type.Literal('GOOGLE'),
      Type.Literal('UNKNOWN'),
    ]),
    /** The provider's name for it; the id when absent. */
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    api_key_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
    vision_supported: Type.Optional(Type.Boolean()),
    reasoning_level: Type.Optional(Type.String({ maxLength: 50 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    cost: Type.Object(
      { input: Type.Number({ minimum: 0 }), output: Type.Number({ minimum: 0 }) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const OperatorFile = Type.Object(
  {
    default_harness: Type.Optional(Type.String({ pattern: HARNESS_NAME })),
    harnesses: Type.Optional(Type.Record(Type.String({ pattern: HARNESS_NAME }), CommandHarness)),
    builtin_harnesses: Type.Optional(
      Type.Object(Object.fromEntries(BUILT_IN_HARNESSES.map((name) => [name, Type.Optional(BuiltInHarness)])), {
        additionalProperties: false,
      }),
    ),
    /** The model catalogue; the built-in list when absent. */
    models: Type.Optional(Type.Array(ModelEntry, { minItems: 1 })),
    default_model: Type.Optional(Type.String()),
    disabled_models: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);
type OperatorFile = Static<typeof OperatorFile>;

export interface CommandHarnessConfig {
  name: string;
  command: string[];
  env: Record<string, string>;
  timeoutMinutes: number;
  /** Under bwrap: share the host network with the harness (model providers, git hosts). */
  network: boolean;
  /** Follow-ups are written to stdin while it runs; otherwise they wait for the next execution. */
  acceptsInput: boolean;
  /** `events`: stdout is the JSON Lines event protocol; `text`: plain text (kept, but no normalized conversation). */
  output: 'events' | 'text';
}

export interface BuiltInHarnessConfig {
  timeoutMinutes: number;
  network: boolean;
  maxSteps: number;
  path?: string;
}

export interface OperatorConfig {
  harnesses: Map<string, CommandHarnessConfig>;
  builtIn: Record<BuiltInHarnessName, BuiltInHarnessConfig>;
  /** The file sets up built-in harnesses (`builtin_harnesses`, or one of them as `default_harness`). */
  builtInConfigured: boolean;
  /** The harness of runs that do not name one: `default_harness`, else the only command harness, else oz. */
  defaultHarness: string;
  catalogue: CatalogueConfig;
}

export class OperatorConfigError extends Error {}

const validate = Compile(OperatorFile);

function expand(value: string, env: Record<string, string | undefined>, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const found = env[name];
    if (found === undefined)
      throw new OperatorConfigError(`${where} uses \${${name}}, which is not set in Hangar's environment`);
    return found;
  });
}

export function parseOperatorConfig(
  text: string,
  source: string,
  env: Record<string, string | undefined> = process.env,
  baseDirectory = process.cwd(),
): OperatorConfig {
  let raw: unknown;
  try {
    raw = YAML.parse(text) ?? {};
  } catch (error) {
    throw new OperatorConfigError(`${source}: not valid YAML: ${(error as Error).message}`);
  }
  if (!validate.Check(raw)) {
    const first = [...validate.Errors(raw)][0];
    throw new OperatorConfigError(`${source}: ${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`);
  }
  const file = raw as OperatorFile;
  const harnesses = new Map<string, CommandHarnessConfig>();
  for (const [name, harness] of Object.entries(file.harnesses ?? {})) {
    if (isBuiltInHarness(name))
      throw new OperatorConfigError(
        `${source}: harnesses.${name}: the name is a built-in harness's; configure it under builtin_harnesses`,
      );
    const harnessEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries(harness.env ?? {})) {
      harnessEnv[key] = expand(value, env, `${source}: harnesses.${name}.env.${key}`);
    }
    harnesses.set(name, {
      name,
      // The harness runs in its workspace, so paths relative to the config file are made absolute here.
      command: harness.command.map((arg) => (/^\.\.?\//.test(arg) ? path.resolve(baseDirectory, arg) : arg)),
      env: harnessEnv,
      timeoutMinutes: harness.timeout_minutes ?? 60,
      network: harness.network ?? false,
      acceptsInput: harness.accepts_input ?? false,
      output: harness.output ?? 'events',
    });
  }
  const defaultHarness = file.default_harness ?? (harnesses.size === 1 ? [...harnesses.keys()][0]! : 'oz');
  if (!harnesses.has(defaultHarness) && !isBuiltInHarness(defaultHarness)) {
    throw new OperatorConfigError(
      `${source}: default_harness "${defaultHarness}" is neither a built-in harness (${BUILT_IN_HARNESSES.join(', ')}) nor one of the harnesses defined`,
    );
  }
  const builtInConfigured =
    file.builtin_harnesses !== undefined ||
    (file.default_harness !== undefined && isBuiltInHarness(file.default_harness));
  return {
    harnesses,
    builtIn: builtInConfig(file, baseDirectory),
    builtInConfigured,
    defaultHarness,
    catalogue: catalogueConfig(file, source),
  };
}

function builtInConfig(file: OperatorFile, baseDirectory: string): Record<BuiltInHarnessName, BuiltInHarnessConfig> {
  const settings = (file.builtin_harnesses ?? {}) as Partial<Record<BuiltInHarnessName, Static<typeof BuiltInHarness>>>;
  return Object.fromEntries(
    BUILT_IN_HARNESSES.map((name) => {
      const given = settings[name] ?? {};
      const config: BuiltInHarnessConfig = {
        timeoutMinutes: given.timeout_minutes ?? 60,
        network: given.network ?? false,
        maxSteps: given.max_steps ?? 50,
        ...(given.path ? { path: path.resolve(baseDirectory, given.path) } : {}),
      };
      return [name, config];
    }),
  ) as Record<BuiltInHarnessName, BuiltInHarnessConfig>;
}

/** The `models`, `default_model` and `disabled_models` keys, checked against each other. */
function catalogueConfig(file: OperatorFile, source: string): CatalogueConfig {
  const models: ModelDefinition[] | undefined = file.models?.map((entry) => ({
    id: entry.id,
    display_name: entry.display_name ?? entry.id,
    provider: entry.provider,
    provider_model: entry.model ?? entry.id,
    ...(entry.base_url ? { base_url: entry.base_url } : {}),
    ...(entry.api_key_env ? { api_key_env: entry.api_key_env } : {}),
    vision_supported: entry.vision_supported ?? false,
    ...(entry.reasoning_level ? { reasoning_level: entry.reasoning_level } : {}),
    ...(entry.description ? { description: entry.description } : {}),
    cost: entry.cost,
  }));
  const ids = new Set<string>();
  for (const model of models ?? []) {
    if (ids.has(model.id)) throw new OperatorConfigError(`${source}: models lists ${model.id} twice`);
    ids.add(model.id);
    if (model.provider === 'UNKNOWN' && !model.base_url)
      throw new OperatorConfigError(`${source}: model ${model.id} (provider UNKNOWN) needs a base_url`);
  }
  const known = new Set((models ?? BUILT_IN_MODELS).map((model) => model.id));
  for (const id of [...(file.default_model ? [file.default_model] : []), ...(file.disabled_models ?? [])]) {
    if (!known.has(id))
      throw new OperatorConfigError(`${source}: model ${id} is not in the catalogue (${[...known].join(', ')})`);
  }
  return {
    ...(models ? { models } : {}),
    ...(file.default_model ? { defaultModel: file.default_model } : {}),
    disabledModels: file.disabled_models ?? [],
  };
}

export function loadOperatorConfig(
  file: string | undefined,
  env: Record<string, string | undefined> = process.env,
): OperatorConfig {
  if (file === undefined) return parseOperatorConfig('{}', 'defaults', env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new OperatorConfigError(
      `HANGAR_CONFIG: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return parseOperatorConfig(text, file, env, path.dirname(path.resolve(file)));
}
