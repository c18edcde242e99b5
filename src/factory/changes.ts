/** What an apply or a plan does to each thing a factory definition names, and how a change is found. */

export interface DefinitionChange {
  kind: 'factory' | 'skill' | 'agent' | 'webhook' | 'automation' | 'runner';
  name: string;
  action: 'create' | 'update' | 'delete' | 'unchanged';
  /** The UID or ID it has (after an apply; a plan knows it only for what exists already). */
  uid: string | null;
  /** For an update: the fields that change. */
  fields?: string[];
}

/** JSON with object keys sorted: stored JSON (jsonb) does not keep the order the files wrote keys in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The fields whose values differ. */
function changedFields<T extends object>(before: T, after: T): string[] {
  return (Object.keys(after) as Array<keyof T>)
    .filter((key) => canonical(before[key]) !== canonical(after[key]))
    .map(String);
}

export function change(
  kind: DefinitionChange['kind'],
  name: string,
  uid: string | null,
  before: object | undefined,
  after: object,
): DefinitionChange {
  if (!before) return { kind, name, action: 'create', uid };
  const fields = changedFields(before as Record<string, unknown>, after as Record<string, unknown>);
  return fields.length > 0 ? { kind, name, action: 'update', uid, fields } : { kind, name, action: 'unchanged', uid };
}
