import { type Static, Type } from 'typebox';
import { literalUnion } from '../platform/http/literal-union.js';
import { AgentConfig, RUN_MODES } from '../runs/index.js';

/** Wire schemas of scheduled agents. */

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  cron_schedule: Type.String({
    maxLength: 200,
    description: '5-field cron (UTC), 6 fields with seconds, or a macro such as @daily',
  }),
  prompt: Type.String({ minLength: 1, maxLength: 200_000 }),
  enabled: Type.Boolean({ description: 'false = paused' }),
  agent_config: Type.Optional(AgentConfig),
  agent_uid: Type.Optional(Type.String({ maxLength: 64, description: 'Agent identity that executes the runs' })),
  metadata: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Stamped on every run it starts; a PUT without it clears it (for the runs after)',
    }),
  ),
  mode: Type.Optional(
    literalUnion(RUN_MODES, {
      description: 'The mode of every run it starts (default normal); never read from the prompt',
    }),
  ),
};

export const CreateScheduleBody = Type.Object({
  ...fields,
  team: Type.Optional(Type.Boolean({ description: 'Team-owned schedule (default) or personal schedule.' })),
});
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;

/** PUT replaces the whole schedule: omitted optional fields are cleared. */
export const UpdateScheduleBody = Type.Object(fields);
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>;

export const ScheduleIdParams = Type.Object({ scheduleId: Type.String({ minLength: 1, maxLength: 200 }) });

const Profile = Type.Object({
  type: Type.Union([Type.Literal('user'), Type.Literal('service_account')]),
  uid: Type.String(),
  display_name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
});

export const ScheduleItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  cron_schedule: Type.String(),
  enabled: Type.Boolean(),
  prompt: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  agent_config: Type.Optional(Type.Object({}, { additionalProperties: true })),
  agent_uid: Type.Optional(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
  mode: Type.Optional(literalUnion(RUN_MODES)),
  environment: Type.Optional(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The config of the environment agent_config.environment_id names, as GET /agent/environments shows it; absent without one or when the caller's team cannot reach it",
      },
    ),
  ),
  created_by: Profile,
  updated_by: Profile,
  history: Type.Object({
    last_ran: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    next_run: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
  last_spawn_error: Type.Union([Type.String(), Type.Null()]),
  scope: Type.Object({ type: Type.String(), uid: Type.String() }),
});
export type ScheduleItem = Static<typeof ScheduleItem>;

export const ScheduleList = Type.Object({ schedules: Type.Array(ScheduleItem) });
export const DeleteScheduleResponse = Type.Object({ success: Type.Boolean() });
