import { RUNNER_SANDBOXES } from '../runners/index.js';
import { describe, Fields, isRecord, readYamlMapping } from './definition-fields.js';
import type { DefinitionError, RunnerDefinition } from './definition-types.js';

/**
 * `runners/<name>.yaml`: a runner of the factory, in the API's words (POST /runners): the sandbox kind and the shape
 * its runs execute with. What depends on the server (its sandbox kind, the operator's maxima and runtime classes, the
 * placement a pod template may set) is checked at apply by the runners slice, and reported on this file.
 */

const KEYS = ['description', 'sandbox', 'limits', 'kubernetes'] as const;
/** Each key of a nested mapping and the type its value must have. */
const LIMITS = { cpus: 'number', memory: 'string', pids: 'integer' } as const;
const KUBERNETES = { runtime_class_name: 'string', pod_template: 'mapping' } as const;
type Kind = 'number' | 'string' | 'integer' | 'mapping';

const fits: Record<Kind, (value: unknown) => boolean> = {
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  integer: (value) => Number.isInteger(value),
  string: (value) => typeof value === 'string' && value.trim() !== '',
  mapping: isRecord,
};
const said: Record<Kind, string> = {
  number: 'a number',
  integer: 'a whole number',
  string: 'a non-empty string',
  mapping: 'a mapping',
};

export function parseRunner(
  file: string,
  name: string,
  text: string,
  errors: DefinitionError[],
): RunnerDefinition | null {
  const mapping = readYamlMapping(file, text, errors);
  if (!mapping) return null;
  const fields = new Fields(mapping, errors);
  fields.allowOnly(KEYS, 'a runner file');
  const description = fields.string('description', { maxLength: 2000 });
  const sandbox = fields.choice('sandbox', RUNNER_SANDBOXES, null);
  const limits = nested(fields, 'limits', LIMITS);
  const kubernetes = nested(fields, 'kubernetes', KUBERNETES);
  return {
    name,
    file,
    description: description ?? null,
    sandbox: sandbox ?? null,
    limits: limits ?? null,
    kubernetes: kubernetes ?? null,
    lines: mapping.lines,
  };
}

/** A nested mapping whose keys are `shape`'s, each of its type; null when absent, undefined after an error. */
function nested(fields: Fields, key: string, shape: Record<string, Kind>): Record<string, unknown> | null | undefined {
  const value = fields.values[key];
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) {
    fields.fail(key, `${key} must be a mapping (${Object.keys(shape).join(', ')}), not ${describe(value)}.`);
    return undefined;
  }
  let valid = true;
  for (const [entry, item] of Object.entries(value)) {
    const kind = shape[entry];
    if (kind === undefined) {
      fields.fail(
        `${key}.${entry}`,
        `Unknown key "${entry}" in ${key}; expected one of ${Object.keys(shape).join(', ')}.`,
      );
      valid = false;
    } else if (!fits[kind](item)) {
      fields.fail(`${key}.${entry}`, `${key}.${entry} must be ${said[kind]}, not ${describe(item)}.`);
      valid = false;
    }
  }
  return valid ? value : undefined;
}
