import { type Static, Type } from 'typebox';

/** Wire schemas of the worker keys API (/api/v1/selfhosted/worker-keys). */

const Timestamp = Type.String({ format: 'date-time' });

export const CreateWorkerKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'What the key is for, e.g. the machine.' }),
  worker_id: Type.String({
    minLength: 1,
    maxLength: 200,
    description:
      'The worker ID the key may connect as, or a pattern where * stands for any characters (build-*; * for every worker of the team).',
  }),
});
export type CreateWorkerKeyBody = Static<typeof CreateWorkerKeyBody>;

export const WorkerKey = Type.Object({
  uid: Type.String(),
  name: Type.String(),
  display_prefix: Type.String(),
  worker_id: Type.String(),
  created_by_uid: Type.Optional(Type.String()),
  created_at: Timestamp,
  revoked_at: Type.Optional(Timestamp),
});
export const CreatedWorkerKey = Type.Intersect([
  WorkerKey,
  Type.Object({ key: Type.String({ description: 'Shown once, never again.' }) }),
]);
export const WorkerKeyList = Type.Object({ worker_keys: Type.Array(WorkerKey) });
export const WorkerKeyParams = Type.Object({ keyUid: Type.String({ minLength: 1, maxLength: 64 }) });
