import { type Static, Type } from 'typebox';

const OverviewWindow = Type.Union([Type.Literal('24h'), Type.Literal('7d')]);

export const OverviewQuery = Type.Object({
  window: Type.Optional(
    Type.Union([Type.Literal('24h'), Type.Literal('7d')], {
      description: 'The last 24 hours (default) or the last 7 days',
    }),
  ),
});
export type OverviewQuery = Static<typeof OverviewQuery>;

const Percentiles = Type.Object({
  p50_seconds: Type.Union([Type.Number(), Type.Null()]),
  p95_seconds: Type.Union([Type.Number(), Type.Null()]),
  runs: Type.Integer({ description: 'How many runs the figures are taken over' }),
});

export const OverviewResponse = Type.Object({
  window: OverviewWindow,
  since: Type.String({ format: 'date-time', description: 'Start of the first bucket (whole hour, UTC)' }),
  until: Type.String({ format: 'date-time', description: 'When the figures were taken' }),
  bucket_seconds: Type.Integer(),
  runs_by_hour: Type.Array(
    Type.Object({
      at: Type.String({ format: 'date-time', description: 'Start of the hour' }),
      counts: Type.Record(Type.String(), Type.Integer(), {
        description: 'Runs created in the hour, by their state now',
      }),
    }),
  ),
  queue: Type.Object({
    waiting_now: Type.Integer({ description: 'Runs not started yet: QUEUED and PENDING' }),
    queued_now: Type.Integer(),
    pending_now: Type.Integer(),
    running_now: Type.Integer({ description: 'Runs CLAIMED or INPROGRESS' }),
    over_time: Type.Array(
      Type.Object({
        at: Type.String({ format: 'date-time', description: 'Start of the hour' }),
        waiting: Type.Integer({ description: 'Runs waiting at the end of the hour (now, for the current one)' }),
      }),
    ),
  }),
  queue_wait: Percentiles,
  run_time: Percentiles,
  failures: Type.Array(
    Type.Object({
      error_code: Type.Union([Type.String(), Type.Null()], { description: 'null: the run ended without one' }),
      runs: Type.Integer(),
    }),
    { description: 'FAILED, ERROR and BLOCKED runs created in the window, by error code, most first' },
  ),
  spend_by_day: Type.Array(
    Type.Object({
      day: Type.String({ format: 'date', description: 'UTC day the runs were created' }),
      model_id: Type.Union([Type.String(), Type.Null()]),
      cost_usd: Type.Number(),
      runs: Type.Integer(),
    }),
  ),
  busiest_schedules: Type.Array(Type.Object({ schedule_id: Type.String(), name: Type.String(), runs: Type.Integer() })),
  busiest_automations: Type.Array(
    Type.Object({ automation_id: Type.String(), name: Type.String(), runs: Type.Integer() }),
  ),
});
export type OverviewResponse = Static<typeof OverviewResponse>;
