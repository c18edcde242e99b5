import { type Static, Type } from 'typebox';

export const CreateFactoryBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
export type CreateFactoryBody = Static<typeof CreateFactoryBody>;

export const FactoryItem = Type.Object({
  uid: Type.String(),
  name: Type.String(),
  is_default: Type.Boolean({ description: 'Webhooks and automations created without factory_uid go here' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type FactoryItem = Static<typeof FactoryItem>;

export const FactoryList = Type.Object({ factories: Type.Array(FactoryItem, { description: 'Sorted by name' }) });

export const DefinitionFiles = Type.Object(
  {
    files: Type.Record(Type.String({ maxLength: 500 }), Type.String({ maxLength: 256 * 1024 }), {
      description: 'The definition directory: relative path (with /) to UTF-8 content',
      maxProperties: 1000,
    }),
  },
  { additionalProperties: false },
);
export type DefinitionFiles = Static<typeof DefinitionFiles>;

const Change = Type.Object({
  kind: Type.String({ description: 'factory, skill, agent, webhook, automation or runner' }),
  name: Type.String(),
  action: Type.String({ description: 'create, update, delete or unchanged' }),
  uid: Type.Union([Type.String(), Type.Null()], { description: 'UID or ID (null for what a plan would create)' }),
  fields: Type.Optional(Type.Array(Type.String(), { description: 'For an update: the fields that change' })),
});

export const ApplyResponse = Type.Object({
  applied: Type.Boolean({ description: 'false for a plan: nothing was changed' }),
  factory: Type.Object({ uid: Type.Union([Type.String(), Type.Null()]), name: Type.String() }),
  changes: Type.Array(Change),
});
