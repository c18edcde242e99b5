/** Run metadata rules: small string-to-string maps, fixed at creation. */

export const MAX_METADATA_KEYS = 20;
export const MAX_METADATA_FILTER_PAIRS = 5;
const KEY_PATTERN = /^[a-zA-Z0-9._-]{1,64}$/;
const MAX_VALUE_BYTES = 256;

/** Returns the reason a key/value pair is not allowed, or null when it is fine. */
export function metadataPairProblem(key: string, value: string): string | null {
  if (!KEY_PATTERN.test(key)) return `metadata key "${key}" must be 1-64 characters of [a-zA-Z0-9._-]`;
  if (Buffer.byteLength(value, 'utf8') > MAX_VALUE_BYTES)
    return `metadata value of "${key}" is longer than ${MAX_VALUE_BYTES} bytes`;
  if (value.includes('\0')) return `metadata value of "${key}" contains a NUL character`;
  return null;
}

export function metadataProblem(metadata: Record<string, string>): string | null {
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_KEYS)
    return `metadata has ${entries.length} keys; at most ${MAX_METADATA_KEYS} are allowed`;
  for (const [key, value] of entries) {
    const problem = metadataPairProblem(key, value);
    if (problem) return problem;
  }
  return null;
}

/** Merge order: the request wins over the parent run, which wins over keys Hangar sets itself. */
export function mergeMetadata(
  automatic: Record<string, string>,
  parent: Record<string, string>,
  request: Record<string, string>,
): Record<string, string> {
  return { ...automatic, ...parent, ...request };
}

/** Reads `metadata[key]=value` pairs (deepObject style) out of a parsed query string. */
export function metadataFilterFromQuery(query: Record<string, unknown>): Record<string, string> | null {
  const filter: Record<string, string> = {};
  let found = false;
  for (const [name, raw] of Object.entries(query)) {
    const match = /^metadata\[(.*)\]$/.exec(name);
    if (!match) continue;
    found = true;
    filter[match[1]!] = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
  }
  return found ? filter : null;
}
