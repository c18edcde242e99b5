import { type Static, Type } from 'typebox';

export const AuditEntry = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  team_uid: Type.Union([Type.String(), Type.Null()], { description: 'null for instance-wide changes' }),
  actor: Type.Object({
    type: Type.String({ description: '`user` or `service_account` (an agent identity)' }),
    uid: Type.String(),
  }),
  key_uid: Type.Union([Type.String(), Type.Null()], { description: 'the API key the change was made with' }),
  client_address: Type.Union([Type.String(), Type.Null()]),
  action: Type.String({ description: 'e.g. `secret.create`, `api_key.revoke`, `webhook.rotate`' }),
  target: Type.Union([Type.String(), Type.Null()], { description: 'UID or name of what changed' }),
  details: Type.Record(Type.String(), Type.Unknown(), {
    description: 'route parameters, allow-listed fields as sent, and the names of the other fields; never a value',
  }),
});

export const AuditList = Type.Object({
  entries: Type.Array(AuditEntry),
  page_info: Type.Object({ has_next_page: Type.Boolean(), next_cursor: Type.Optional(Type.String()) }),
});

const paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 500 })),
  action: Type.Optional(Type.String({ maxLength: 100 })),
};
export const AuditQuery = Type.Object(paging);
export type AuditQuery = Static<typeof AuditQuery>;

export const AdminAuditQuery = Type.Object({ ...paging, team_uid: Type.Optional(Type.String({ maxLength: 100 })) });
export type AdminAuditQuery = Static<typeof AdminAuditQuery>;
