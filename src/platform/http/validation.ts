import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/** `verbose`: an error carries its schema and the value, from which validation-message.ts says what was expected. */
function ajv(options: Options): Ajv {
  const instance = new Ajv({
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    strict: false,
    verbose: true,
    ...options,
  });
  addFormats.default(instance);
  return instance;
}

/**
 * Query strings, path parameters and headers arrive as text, so they are coerced to the schema's types (and a
 * lone `state=X` becomes an array). JSON bodies are not: `{"model_id": 5}` is an error, not "5".
 */
const coercing = ajv({ coerceTypes: 'array' });
const exact = ajv({ coerceTypes: false });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? exact : coercing).compile(schema) as ReturnType<FastifySchemaCompiler<object>>;
