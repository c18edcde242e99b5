import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import {
  GitHubTrigger,
  MAX_TRIGGERS,
  payloadFilterProblem,
  ScheduleTrigger,
  type Trigger,
  WebhookTrigger,
} from '../automations/index.js';
import { cronProblem } from '../schedules/index.js';
import { describe, Fields, isRecord, readMarkdown } from './definition-fields.js';
import type { AutomationDefinition, DefinitionError, References } from './definition-types.js';

/** `automations/<name>/automation.md`: front matter with the triggers, then the prompt as Markdown. */

const KEYS = ['enabled', 'agent', 'triggers', 'model', 'harness', 'environment'] as const;
/** The limits of the automation API's prompt and of AgentConfig's fields, so that apply does not fail on them. */
const MAX_PROMPT = 100_000;
const OVERRIDES = [
  { key: 'model', field: 'model_id', maxLength: 200 },
  { key: 'harness', field: 'harness', maxLength: 63 },
  { key: 'environment', field: 'environment_id', maxLength: 64 },
] as const;

interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  message: string;
  params: unknown;
}
interface Checker {
  Type(): TSchema;
  Check(value: unknown): boolean;
  Errors(value: unknown): SchemaError[];
}
// Each provider is checked against its own branch of the Trigger union: the union's errors mix the branches.
const CHECKERS: Record<string, Checker> = {
  webhook: Compile(WebhookTrigger),
  schedule: Compile(ScheduleTrigger),
  github: Compile(GitHubTrigger),
};
const PROVIDERS = 'provider: webhook, provider: schedule or provider: github';

/** `/filter/webhook_ids/0` -> `.filter.webhook_ids[0]` (JSON pointer to our key paths). */
function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('');
}

/** The keys the schema at `#/properties/filter` allows, to say what is expected instead of an unknown key. */
function allowedKeys(root: TSchema, schemaPath: string): string[] {
  let schema: unknown = root;
  for (const segment of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean))
    schema = isRecord(schema) ? schema[segment] : undefined;
  return isRecord(schema) && isRecord(schema.properties) ? Object.keys(schema.properties) : [];
}

/** TypeBox's first error as a sentence about the key path, and the path whose line to report. */
function schemaMessage(checker: Checker, value: unknown, base: string): { at: string; message: string } {
  for (const error of checker.Errors(value)) {
    // additionalProperties: false also yields a "schema is false" error per extra key; the parent error names them all.
    if (error.keyword === 'boolean') continue;
    const at = base + pointerToPath(error.instancePath);
    const params = error.params as {
      requiredProperties?: string[];
      additionalProperties?: string[];
      allowedValue?: unknown;
      type?: string;
      limit?: number;
    };
    switch (error.keyword) {
      case 'required':
        return { at, message: `${at} is missing ${params.requiredProperties?.join(', ')}; add the key.` };
      case 'additionalProperties': {
        const extra = params.additionalProperties ?? [];
        const expected = allowedKeys(checker.Type(), error.schemaPath).join(', ');
        return {
          at: `${at}.${extra[0]}`,
          message: `${at} has unknown key ${extra.map((key) => `"${key}"`).join(', ')}; expected only ${expected}.`,
        };
      }
      case 'const':
        return {
          at,
          message: `${at} must be ${JSON.stringify(params.allowedValue)}, not ${describe(valueAt(value, error.instancePath))}.`,
        };
      case 'type': {
        const kind = params.type === 'object' ? 'a mapping' : params.type === 'array' ? 'a list' : `a ${params.type}`;
        return { at, message: `${at} must be ${kind}, not ${describe(valueAt(value, error.instancePath))}.` };
      }
      case 'minItems':
        return { at, message: `${at} must list at least ${params.limit} item(s).` };
      case 'maxItems':
        return { at, message: `${at} may list at most ${params.limit} items.` };
      default:
        return { at, message: `${at} is not valid: it ${error.message}.` };
    }
  }
  return { at: base, message: `${base} is not a valid trigger.` };
}

function valueAt(value: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (node, key) => (isRecord(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined),
      value,
    );
}

/** Checks that TypeBox cannot do: payload filter syntax, cron expressions, and webhook names used as UIDs. */
function semanticProblems(fields: Fields, trigger: Trigger, at: string, refs: References): void {
  if (trigger.provider === 'schedule') {
    const problem = cronProblem(trigger.schedule.cron);
    if (problem) {
      const reason = problem.replace(/^invalid cron_schedule: /, '').replace(/\bcron_schedule\b/, 'the expression');
      fields.fail(
        `${at}.schedule.cron`,
        `${at}.schedule.cron is not usable (${reason}); expected 5 fields in UTC (minute hour day month weekday), 6 with leading seconds, or a macro such as @daily.`,
      );
    }
    return;
  }
  const payload = trigger.filter?.payload;
  if (payload !== undefined) {
    const problem = payloadFilterProblem(payload);
    if (problem) fields.fail(`${at}.filter.payload`, `${at}.filter.${problem}.`);
  }
  if (trigger.provider !== 'webhook') return;
  trigger.filter.webhook_ids.forEach((id, index) => {
    const file = refs.webhooks.get(id);
    if (file) {
      fields.fail(
        `${at}.filter.webhook_ids[${index}]`,
        `webhook_ids take webhook UIDs, not names: "${id}" is the file name of ${file}; use the UID that apply printed for it.`,
      );
    }
  });
}

function parseTrigger(fields: Fields, value: unknown, at: string, refs: References): Trigger | null {
  const checker = isRecord(value) && typeof value.provider === 'string' ? CHECKERS[value.provider] : undefined;
  if (!isRecord(value)) {
    fields.fail(
      at,
      `${at} must be a mapping with provider, event and filter (webhook, github) or schedule (schedule), not ${describe(value)}.`,
    );
    return null;
  }
  if (!checker) {
    const message =
      value.provider === undefined
        ? `${at} has no provider; add ${PROVIDERS}.`
        : `${at}.provider must be "webhook", "schedule" or "github", not ${describe(value.provider)}.`;
    fields.fail(`${at}.provider`, message);
    return null;
  }
  if (!checker.Check(value)) {
    const { at: where, message } = schemaMessage(checker, value, at);
    fields.fail(where, message);
    return null;
  }
  const trigger = value as Trigger;
  semanticProblems(fields, trigger, at, refs);
  return trigger;
}

function parseTriggers(fields: Fields, refs: References): Trigger[] {
  const value = fields.values.triggers;
  if (value === undefined || value === null) {
    fields.fail('triggers', `triggers is required: list at least one trigger, with ${PROVIDERS}.`);
    return [];
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_TRIGGERS) {
    const what = Array.isArray(value) ? `${value.length} trigger(s)` : describe(value);
    fields.fail('triggers', `triggers must be a list of 1 to ${MAX_TRIGGERS} triggers, not ${what}.`);
    return [];
  }
  return value
    .map((item, index) => parseTrigger(fields, item, `triggers[${index}]`, refs))
    .filter((trigger) => trigger !== null);
}

export function parseAutomation(
  file: string,
  name: string,
  text: string,
  refs: References,
  errors: DefinitionError[],
): AutomationDefinition | null {
  const markdown = readMarkdown(file, text, errors);
  if (!markdown) return null;
  const fields = new Fields(markdown.mapping, errors);
  fields.allowOnly(KEYS, 'the front matter of an automation');

  const enabled = fields.boolean('enabled', true);
  const agent = fields.string('agent');
  if (typeof agent === 'string' && !refs.agents.has(agent)) {
    const defined = refs.agents.size > 0 ? `one of ${[...refs.agents].join(', ')}` : 'none is defined';
    fields.fail(
      'agent',
      `agent "${agent}" is not defined in this definition; expected the name of a folder agents/<name>/ with an agent.md (${defined}).`,
    );
  }
  const triggers = parseTriggers(fields, refs);
  const overrides: AutomationDefinition['overrides'] = {};
  for (const { key, field, maxLength } of OVERRIDES) {
    const value = fields.string(key, { maxLength });
    if (typeof value === 'string') overrides[field] = value;
  }
  if (markdown.body === '') {
    errors.push({
      file,
      line: markdown.closeLine,
      message: 'The automation has no prompt; write what the agent should do as Markdown after the closing "---".',
    });
  } else if (markdown.body.length > MAX_PROMPT) {
    errors.push({
      file,
      line: markdown.closeLine + 1,
      message: `The prompt is ${markdown.body.length} characters long; the limit is ${MAX_PROMPT}.`,
    });
  }

  return {
    name,
    file,
    enabled: enabled ?? true,
    agent: agent ?? null,
    prompt: markdown.body,
    triggers,
    overrides,
    lines: markdown.mapping.lines,
  };
}
