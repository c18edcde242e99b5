import { invalidRequest } from '../platform/http/errors.js';
import type { McpServerBody } from './schemas.js';

/** A plain value, or a reference to a secret of the server's owning team (resolved only for a run). */
export type ConfigValue = string | { secret: string };

/** What is stored for an MCP server besides its name: a stdio program or an HTTP endpoint. */
export type McpDefinition =
  | { command: string; args: string[]; env: Record<string, ConfigValue> }
  | { url: string; headers: Record<string, ConfigValue> };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

function checkValues(values: Record<string, ConfigValue>, field: 'env' | 'headers'): Record<string, ConfigValue> {
  for (const [key, value] of Object.entries(values)) {
    if (field === 'env' && !ENV_NAME.test(key)) {
      throw invalidRequest(
        `env: "${key}" is not an environment variable name (letters, digits and _, not starting with a digit)`,
      );
    }
    if (field === 'headers' && !HEADER_NAME.test(key))
      throw invalidRequest(`headers: "${key}" is not a valid header name`);
    if (typeof value !== 'string') continue;
    // A NUL cannot be passed in an environment variable; CR or LF in a header would split the request.
    if (value.includes('\0') || (field === 'headers' && /[\r\n]/.test(value))) {
      throw invalidRequest(`${field}.${key} contains a character it cannot carry`);
    }
  }
  return values;
}

/** Checks a create or update body and returns the definition to store (400 with the reason otherwise). */
export function definitionFrom(body: McpServerBody): McpDefinition {
  const hasCommand = body.command !== undefined;
  if (hasCommand === (body.url !== undefined)) {
    throw invalidRequest('give exactly one of command (a stdio server) or url (an HTTP server)');
  }
  if (hasCommand) {
    if (body.headers !== undefined) throw invalidRequest('headers go with url; a stdio server takes env');
    const command = body.command!.trim();
    if (command === '') throw invalidRequest('command must not be blank');
    return { command, args: body.args ?? [], env: checkValues(body.env ?? {}, 'env') };
  }
  if (body.args !== undefined || body.env !== undefined)
    throw invalidRequest('args and env go with command; an HTTP server takes headers');
  let url: URL;
  try {
    url = new URL(body.url!);
  } catch {
    throw invalidRequest('url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidRequest(`url must use http or https, got ${url.protocol}`);
  return { url: body.url!, headers: checkValues(body.headers ?? {}, 'headers') };
}

function valuesOf(definition: McpDefinition): Record<string, ConfigValue> {
  return 'command' in definition ? definition.env : definition.headers;
}

/** The team secrets a definition refers to, each once. */
export function secretNames(definition: McpDefinition): string[] {
  const names = Object.values(valuesOf(definition)).flatMap((value) =>
    typeof value === 'string' ? [] : [value.secret],
  );
  return [...new Set(names)].sort();
}

/** Which `env` or `headers` keys are set from a team secret, and from which (key -> secret name). */
export function secretKeys(definition: McpDefinition): Record<string, string> {
  return Object.fromEntries(
    Object.entries(valuesOf(definition)).flatMap(([key, value]) =>
      typeof value === 'string' ? [] : [[key, value.secret] as const],
    ),
  );
}

/** A definition as a run starts it: every value plain. */
export type ResolvedDefinition =
  | { command: string; args: string[]; env: Record<string, string> }
  | { url: string; headers: Record<string, string> };

/** The definition with every secret reference replaced by its value (`values` maps secret names to values). */
export function withSecretValues(definition: McpDefinition, values: ReadonlyMap<string, string>): ResolvedDefinition {
  const resolve = (entries: Record<string, ConfigValue>) =>
    Object.fromEntries(
      Object.entries(entries).map(([key, value]) => {
        if (typeof value === 'string') return [key, value];
        const secret = values.get(value.secret);
        if (secret === undefined) throw new Error(`no value given for secret ${value.secret}`);
        return [key, secret];
      }),
    );
  return 'command' in definition
    ? { command: definition.command, args: [...definition.args], env: resolve(definition.env) }
    : { url: definition.url, headers: resolve(definition.headers) };
}
