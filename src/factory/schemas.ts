import { Type, type Static } from 'typebox';

export const CreateFactoryBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
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
