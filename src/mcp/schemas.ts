import { type Static, Type } from 'typebox';
import { PATTERN_IN_WORDS } from '../platform/http/validation-message.js';
import { SecretName } from '../secrets/index.js';

/** Wire schemas of shared MCP servers. Secret values never appear: a reference names the team secret. */

export const SecretReference = Type.Object(
  { secret: SecretName },
  { additionalProperties: false, description: "Use the value of this secret of the server's owning team" },
);

// The reference comes first so that a malformed one is reported as such (the first failing branch is named).
const ConfigValue = Type.Union([SecretReference, Type.String({ maxLength: 8192 })]);
const configValues = (description: string) =>
  Type.Record(Type.String(), ConfigValue, { maxProperties: 100, description });

export const MCP_SERVER_NAME_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';

export const McpServerBody = Type.Object(
  {
    name: Type.String({
      pattern: MCP_SERVER_NAME_PATTERN,
      [PATTERN_IN_WORDS]:
        '1-128 letters, digits, underscores, dots or dashes, starting with a letter, a digit or an underscore',
      description: '1-128 characters of [A-Za-z0-9_.-], unique in the team',
    }),
    command: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, description: 'A stdio server: the program to start' }),
    ),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 100, description: 'stdio only' })),
    env: Type.Optional(configValues('stdio only: environment variables, each a string or a secret reference')),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'An HTTP server: its http(s) URL' })),
    headers: Type.Optional(configValues('HTTP only: request headers, each a string or a secret reference')),
  },
  { additionalProperties: false, description: 'Exactly one of command (stdio) or url (HTTP).' },
);
export type McpServerBody = Static<typeof McpServerBody>;

export const McpServerItem = Type.Object({
  uid: Type.String({ description: '22 characters of [A-Za-z0-9]; use it as {"warp_id": uid} in a run config' }),
  name: Type.String(),
  command: Type.Optional(Type.String()),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(configValues('Plain values as given; secrets by reference only')),
  url: Type.Optional(Type.String()),
  headers: Type.Optional(configValues('Plain values as given; secrets by reference only')),
  owner_team_uid: Type.String(),
  shared_with: Type.Optional(
    Type.Array(Type.String(), { description: 'Teams it is shared with; shown to the owning team only' }),
  ),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type McpServerItem = Static<typeof McpServerItem>;

export const McpServerList = Type.Object({ mcp_servers: Type.Array(McpServerItem) });

export const McpServerParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64 }) });
export const ShareParams = Type.Object({
  uid: Type.String({ minLength: 1, maxLength: 64 }),
  team_uid: Type.String({ minLength: 1, maxLength: 64 }),
});
export const ShareBody = Type.Object(
  { team_uid: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export type ShareBody = Static<typeof ShareBody>;
