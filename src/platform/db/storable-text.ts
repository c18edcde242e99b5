/**
 * PostgreSQL's `text` and `jsonb` cannot hold U+0000, and one NUL in a batch fails the whole statement. What a run
 * writes (harness output lines, event payloads, status messages) can contain it, so it is stored escaped as the six
 * characters `\u0000`, the way JSON writes it: readable, and nothing else on the line or in the batch is lost.
 */
const NUL = new RegExp(String.fromCharCode(0), 'g');
const ESCAPED_NUL = '\\u0000';

export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replace(NUL, ESCAPED_NUL) : text;
}

/** `value` with storableText() applied to every string in it, keys included. */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storableValue) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [storableText(key), storableValue(item)]),
    ) as T;
  }
  return value;
}

/** JSON text for a jsonb parameter, with every NUL escaped. */
export function storableJson(value: unknown): string {
  return JSON.stringify(storableValue(value));
}
