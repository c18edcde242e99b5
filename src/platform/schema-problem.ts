/** A schema compiled with `typebox/compile`, as far as reporting its errors goes. */
interface CompiledSchema {
  Errors(value: unknown): Iterable<{ instancePath: string; message: string; keyword: string; params: unknown }>;
}

/**
 * The first problem of a value a compiled schema refused, worded for a 400: `<name>.<path>: <message>`, with
 * the names of unexpected properties. For values checked by hand (one item of a batch), not request bodies.
 */
export function schemaProblem(check: CompiledSchema, value: unknown, name: string): string {
  for (const error of check.Errors(value)) {
    // `additionalProperties: false` also reports each extra property as "schema is false"; the parent error names them all.
    if (error.keyword === 'boolean') continue;
    const extra = (error.params as { additionalProperties?: string[] }).additionalProperties;
    return `${name}${error.instancePath.replace(/\//g, '.')}: ${error.message}${extra ? ` (${extra.join(', ')})` : ''}`;
  }
  return `${name} is not valid`;
}
