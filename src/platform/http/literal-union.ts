import { type TLiteral, type TSchema, type TSchemaOptions, type TUnion, Type } from 'typebox';

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> } & TSchema[];

/**
 * A schema for one of a closed list's values, typed as that list's union. `Type.Union(list.map(Type.Literal))` is
 * the same schema, but the map's result is an array, not a tuple, so TypeBox's static type of it is `never` (an
 * optional field of it types as `undefined`, and assigning a value fails to compile).
 */
export function literalUnion<const T extends readonly string[]>(
  values: T,
  options?: TSchemaOptions,
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  const literals = values.map((value) => Type.Literal(value)) as Literals<T>;
  return Type.Union(literals, options) as never;
}
