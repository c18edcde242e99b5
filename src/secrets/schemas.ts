import { type Static, Type } from 'typebox';
import { PATTERN_IN_WORDS } from '../platform/http/validation-message.js';

/** Wire schemas of team secrets. A value goes in and is never sent back out: no response carries one. */

/** 1-128 characters of [A-Za-z0-9_.-], starting with a letter or underscore. */
export const SECRET_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_.-]{0,127}$';
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

export const SecretName = Type.String({
  pattern: SECRET_NAME_PATTERN,
  [PATTERN_IN_WORDS]: '1-128 letters, digits, underscores, dots or dashes, starting with a letter or an underscore',
  description: '1-128 characters of [A-Za-z0-9_.-], starting with a letter or underscore',
});

const SecretValue = Type.String({
  minLength: 1,
  maxLength: MAX_SECRET_VALUE_BYTES,
  description: 'The value, at most 64 KiB of UTF-8. Write-only: encrypted at rest and never returned.',
});

export const CreateSecretBody = Type.Object({ name: SecretName, value: SecretValue }, { additionalProperties: false });
export type CreateSecretBody = Static<typeof CreateSecretBody>;

export const UpdateSecretBody = Type.Object({ value: SecretValue }, { additionalProperties: false });
export type UpdateSecretBody = Static<typeof UpdateSecretBody>;

export const SecretNameParams = Type.Object({ name: SecretName });

export const SecretItem = Type.Object({
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type SecretItem = Static<typeof SecretItem>;

export const SecretList = Type.Object({ secrets: Type.Array(SecretItem, { description: 'Sorted by name' }) });

export const GranteeType = Type.Union([Type.Literal('member'), Type.Literal('agent'), Type.Literal('environment')], {
  description:
    '`member`: a user of the team (their runs, schedules and automations); `agent`: runs an agent identity executes; `environment`: runs in that environment',
});

export const SecretGrantBody = Type.Object(
  {
    grantee_type: GranteeType,
    grantee_uid: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The user uid, agent identity uid or environment id',
    }),
  },
  { additionalProperties: false },
);
export type SecretGrantBody = Static<typeof SecretGrantBody>;

export const SecretGrantItem = Type.Object({
  grantee_type: GranteeType,
  grantee_uid: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
export type SecretGrantItem = Static<typeof SecretGrantItem>;

export const SecretGrantList = Type.Object({ grants: Type.Array(SecretGrantItem) });

export const SecretGrantParams = Type.Object({
  name: SecretName,
  grantee_type: GranteeType,
  grantee_uid: Type.String({ minLength: 1, maxLength: 200 }),
});
