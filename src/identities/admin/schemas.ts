import { type Static, Type } from 'typebox';

/** Wire schemas of the instance administration API (/api/v1/admin/...). */

const Timestamp = Type.String({ format: 'date-time' });

export const CreateTeamBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) });
export const Team = Type.Object({ uid: Type.String(), name: Type.String(), created_at: Timestamp });
export const TeamList = Type.Object({ teams: Type.Array(Team) });

export const CreateUserBody = Type.Object({
  display_name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
  is_admin: Type.Optional(Type.Boolean({ description: 'Instance administrator (this API).' })),
});
export type CreateUserBody = Static<typeof CreateUserBody>;
export const User = Type.Object({
  uid: Type.String(),
  display_name: Type.String(),
  email: Type.Optional(Type.String()),
  is_admin: Type.Boolean(),
  created_at: Timestamp,
});
export const UserList = Type.Object({ users: Type.Array(User) });

export const TeamParams = Type.Object({ teamUid: Type.String({ minLength: 1, maxLength: 64 }) });
export const MemberParams = Type.Object({
  teamUid: Type.String({ minLength: 1, maxLength: 64 }),
  userUid: Type.String({ minLength: 1, maxLength: 64 }),
});
export const SetMemberBody = Type.Object({ role: Type.Union([Type.Literal('admin'), Type.Literal('member')]) });
export const Member = Type.Object({
  team_uid: Type.String(),
  user_uid: Type.String(),
  display_name: Type.String(),
  email: Type.Optional(Type.String()),
  role: Type.String(),
  created_at: Timestamp,
});
export const MemberList = Type.Object({ members: Type.Array(Member) });

export const CreateKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  user_uid: Type.Optional(Type.String({ maxLength: 64 })),
  agent_uid: Type.Optional(Type.String({ maxLength: 64, description: 'Give exactly one of user_uid and agent_uid.' })),
});
export type CreateKeyBody = Static<typeof CreateKeyBody>;
export const ApiKey = Type.Object({
  uid: Type.String(),
  name: Type.String(),
  display_prefix: Type.String(),
  user_uid: Type.Optional(Type.String()),
  agent_uid: Type.Optional(Type.String()),
  created_at: Timestamp,
  revoked_at: Type.Optional(Timestamp),
});
export const CreatedApiKey = Type.Intersect([
  ApiKey,
  Type.Object({ key: Type.String({ description: 'Shown once, never again.' }) }),
]);
export const KeyListQuery = Type.Object({
  user_uid: Type.Optional(Type.String()),
  agent_uid: Type.Optional(Type.String()),
});
export type KeyListQuery = Static<typeof KeyListQuery>;
export const ApiKeyList = Type.Object({ api_keys: Type.Array(ApiKey) });
export const KeyParams = Type.Object({ keyUid: Type.String({ minLength: 1, maxLength: 64 }) });
