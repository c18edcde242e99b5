/**
 * Values shorter than this are never redacted: a short value (a PIN, a port, `true`, a region) also occurs in
 * ordinary text, so replacing every occurrence would garble transcripts and logs while hiding next to nothing (a
 * value that short can be guessed anyway). Real credentials (API keys, tokens, passwords worth the name) are longer.
 */
export const MIN_REDACTED_LENGTH = 8;

/**
 * A value split across two lines is caught when each side holds at least this many of its characters; a shorter
 * side is left as it is (it shows at most this many characters less one of a value at least MIN_REDACTED_LENGTH
 * long), as a fragment that short cannot be told from ordinary text ending or starting a line.
 */
export const MIN_SPLIT_FRAGMENT = 4;

interface Entry {
  name: string;
  value: string;
}

/** What stands in for a value: `[REDACTED:NAME]`. */
export function redactedMark(name: string): string {
  return `[REDACTED:${name}]`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value as it appears inside a JSON string (quotes, backslashes, control characters escaped). */
function jsonForm(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/**
 * The secret values one run was given, by name, and their replacement by `[REDACTED:NAME]` in any text or JSON
 * value. Each value is found as it is and in its JSON-escaped form (a value with a quote or a backslash in a JSON
 * line). The first name given for a value is the one shown.
 */
export class Redactor {
  private readonly entries: Entry[] = [];
  private pattern: RegExp | null = null;
  private readonly byForm = new Map<string, string>();

  /** Adds a value under a name; values shorter than MIN_REDACTED_LENGTH are ignored (see there). */
  add(name: string, value: string | undefined): this {
    if (value === undefined || value.length < MIN_REDACTED_LENGTH) return this;
    if (this.entries.some((entry) => entry.value === value)) return this;
    this.entries.push({ name, value });
    for (const form of new Set([value, jsonForm(value)])) if (!this.byForm.has(form)) this.byForm.set(form, name);
    // Longest first, so a value that contains another is replaced whole.
    const forms = [...this.byForm.keys()].sort((a, b) => b.length - a.length);
    this.pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
    return this;
  }

  /** Adds every value of a map, each under its key. */
  addAll(values: Readonly<Record<string, string | undefined>>): this {
    for (const [name, value] of Object.entries(values)) this.add(name, value);
    return this;
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** The values with their names (for the split-line check). */
  get values(): readonly Entry[] {
    return this.entries;
  }

  /** The text with every value replaced. */
  text(text: string): string {
    if (!this.pattern || text.length < MIN_REDACTED_LENGTH) return text;
    return text.replace(this.pattern, (form) => redactedMark(this.byForm.get(form)!));
  }

  /** Any JSON-like value with every string in it (keys included) redacted; the same object when nothing changes. */
  deep<T>(value: T): T {
    if (!this.pattern) return value;
    return redactDeep(value, (text) => this.text(text)) as T;
  }
}

/**
 * An object literal or JSON object: its prototype is Object.prototype, or none at all (Object.create(null)), or
 * a bare prototype that itself has none and no constructor, which is how Fastify's query-string parser makes the
 * objects it returns: skipping those left upload-artifact's query unredacted (issue 47.8). Class instances (a Date,
 * a Buffer) are left as they are.
 */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === null || prototype === Object.prototype) return true;
  return Object.getPrototypeOf(prototype) === null && !Object.hasOwn(prototype as object, 'constructor');
}

function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) {
    const items = value.map((item) => redactDeep(item, redact));
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  if (isPlainObject(value)) {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const redactedKey = redact(key);
      const redactedItem = redactDeep(item, redact);
      if (redactedKey !== key || redactedItem !== item) changed = true;
      return [redactedKey, redactedItem] as const;
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}
