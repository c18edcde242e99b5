import { type Static, Type } from 'typebox';
import { PRESET_NAMES } from './presets.js';

/** Wire schemas of an environment's network: one source for validation, types and the OpenAPI document. */

const HostPattern = Type.String({
  minLength: 1,
  maxLength: 260,
  description:
    'A host name (`registry.npmjs.org`) or a wildcard over its subdomains (`*.githubusercontent.com`), optionally ' +
    'with one port (`example.com:8443`); ports 80 and 443 when none is given',
});

export const AllowEntry = Type.Union([
  HostPattern,
  Type.Object(
    {
      host: Type.String({ minLength: 1, maxLength: 253, description: 'A host name or `*.` wildcard' }),
      ports: Type.Optional(
        Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), {
          minItems: 1,
          maxItems: 20,
          description: 'Ports allowed on it (default 80 and 443)',
        }),
      ),
      methods: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 16 }), {
          minItems: 1,
          maxItems: 10,
          description:
            'HTTP methods allowed in plain HTTP requests (GET, HEAD, ...); TLS is passed through unopened, so an ' +
            'entry with methods allows HTTPS only when it lists CONNECT',
        }),
      ),
    },
    { additionalProperties: false },
  ),
]);
export type AllowEntry = Static<typeof AllowEntry>;

const Preset = Type.Union(
  [
    Type.Literal('npm'),
    Type.Literal('pypi'),
    Type.Literal('crates'),
    Type.Literal('go'),
    Type.Literal('maven'),
    Type.Literal('debian'),
    Type.Literal('ubuntu'),
    Type.Literal('github'),
  ],
  { description: 'A named set of hosts (docs/environments.md#network lists each)' },
);

const AllowList = Type.Object(
  {
    allow: Type.Optional(Type.Array(AllowEntry, { maxItems: 200 })),
    presets: Type.Optional(Type.Array(Preset, { maxItems: PRESET_NAMES.length })),
  },
  { additionalProperties: false, description: 'Only these hosts, through Hangar egress proxy' },
);

export const PhaseNetworkBody = Type.Union([Type.Literal('off'), Type.Literal('open'), AllowList], {
  description:
    '`off` (no network), `open` (the internet but private, host and metadata addresses) or an allow list of ' +
    'hosts reached through Hangar egress proxy',
});
export type PhaseNetworkBody = Static<typeof PhaseNetworkBody>;

export const NetworkBody = Type.Union(
  [
    Type.Boolean({ description: '`true` is `open` for both phases, `false` is `off`' }),
    Type.Object(
      { setup: Type.Optional(PhaseNetworkBody), agent: Type.Optional(PhaseNetworkBody) },
      {
        additionalProperties: false,
        description: "Setup commands' and the agent's network; a phase left out takes the operator's default",
      },
    ),
  ],
  {
    description:
      "What this environment's runs may reach, within the operator's ceilings (a harness's `network`, " +
      'HANGAR_SETUP_NETWORK): docs/environments.md#network',
  },
);
export type NetworkBody = Static<typeof NetworkBody>;

/** One allowed host as stored and enforced: ports always listed, methods only when restricted. */
export const AllowRule = Type.Object({
  host: Type.String(),
  ports: Type.Array(Type.Integer()),
  methods: Type.Optional(Type.Array(Type.String())),
});
export type AllowRule = Static<typeof AllowRule>;

export const PhaseNetwork = Type.Union([
  Type.Literal('off'),
  Type.Literal('open'),
  Type.Object({
    allow: Type.Array(AllowRule, { description: "The hosts listed (the presets' hosts are added when a run starts)" }),
    presets: Type.Optional(Type.Array(Type.String())),
  }),
]);
export type PhaseNetwork = Static<typeof PhaseNetwork>;

/** An environment's network as stored and answered: always the object form. */
export const EnvironmentNetwork = Type.Object({
  setup: Type.Optional(PhaseNetwork),
  agent: Type.Optional(PhaseNetwork),
});
export type EnvironmentNetwork = Static<typeof EnvironmentNetwork>;

export type NetworkPhase = 'setup' | 'agent';

/** One entry of a run's account of refused hosts (account.ts), as `network_refusals` answers it. */
export const RefusalEntrySchema = Type.Object({
  phase: Type.Union([Type.Literal('setup'), Type.Literal('agent')]),
  host: Type.String({
    description: 'The host name asked for (the CONNECT line, the URL, the SNI or the DNS question)',
  }),
  port: Type.Optional(Type.Integer({ description: 'The port asked for; absent for a DNS question' })),
  reason: Type.Union(
    [
      Type.Literal('not_allowed'),
      Type.Literal('private_address'),
      Type.Literal('name_mismatch'),
      Type.Literal('no_server_name'),
      Type.Literal('unresolved'),
      Type.Literal('connection_limit'),
      Type.Literal('byte_budget'),
    ],
    { description: 'Why: not on the allow list, a private address, names that disagree, no SNI, limits' },
  ),
  attempts: Type.Integer({ description: 'How many times it was tried' }),
  first_at: Type.String({ format: 'date-time' }),
  last_at: Type.String({ format: 'date-time' }),
  allow_line: Type.Optional(
    Type.String({ description: 'What to add to network.<phase>.allow to allow it (for not_allowed only)' }),
  ),
});
