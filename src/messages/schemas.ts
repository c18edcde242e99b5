import { type Static, Type } from 'typebox';

/**
 * The messaging API's wire shapes, as the public Oz orchestration client reads them: lists are bare arrays, times
 * RFC 3339, an event's `sequence` an integer cursor.
 */

const RunIdString = Type.String({ minLength: 1, maxLength: 200 });

export const SendMessageBody = Type.Object(
  {
    to: Type.Array(RunIdString, { minItems: 1, maxItems: 20, description: "Runs of the sender's tree" }),
    subject: Type.String({ maxLength: 500 }),
    body: Type.String({ maxLength: 64 * 1024 }),
    sender_run_id: RunIdString,
  },
  { additionalProperties: false },
);
export type SendMessageBody = Static<typeof SendMessageBody>;

export const SendMessageResponse = Type.Object({
  message_ids: Type.Array(Type.String(), { description: 'One per recipient, in the order of `to`' }),
});

const Marks = {
  sent_at: Type.String({ format: 'date-time' }),
  delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  read_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

export const MessageHeader = Type.Object({
  message_id: Type.String(),
  sender_run_id: Type.String(),
  subject: Type.String(),
  ...Marks,
});
export type MessageHeader = Static<typeof MessageHeader>;

export const MessageHeaders = Type.Array(MessageHeader, { description: 'Oldest first' });

export const FullMessage = Type.Object({
  message_id: Type.String(),
  sender_run_id: Type.String(),
  subject: Type.String(),
  body: Type.String(),
  ...Marks,
});
export type FullMessage = Static<typeof FullMessage>;

/**
 * `/agent/messages/{id}` is a run's inbox and `/agent/messages/{id}/read` a message: the router keeps one parameter
 * name per position of a path, so both call it `id`.
 */
export const InboxParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: 'The run' }) });
export const EventRunParams = Type.Object({ runId: RunIdString });
export const MessageParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100, description: 'The message' }),
});

export const InboxQuery = Type.Object({
  unread: Type.Optional(Type.Boolean({ description: 'Only messages not read yet' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only messages sent after this time' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
});

export const EventsQuery = Type.Object({
  run_ids: Type.Union([Type.String({ maxLength: 4200 }), Type.Array(RunIdString, { maxItems: 20 })], {
    description: 'The runs to watch: repeated, or comma-separated; at most 20',
  }),
  since: Type.Integer({ minimum: 0, default: 0, description: 'The `sequence` of the last event already seen' }),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
});

export const RunEvent = Type.Object({
  event_type: Type.String(),
  run_id: Type.String(),
  ref_id: Type.Optional(Type.String()),
  execution_id: Type.Optional(Type.String()),
  occurred_at: Type.String({ format: 'date-time' }),
  sequence: Type.Integer(),
});

export const RunEvents = Type.Array(RunEvent, { description: 'In sequence order' });

export const ReportEventBody = Type.Object(
  {
    event_type: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }),
    execution_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
    ref_id: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ReportEventBody = Static<typeof ReportEventBody>;

export const ReportEventResponse = Type.Object({ sequence: Type.Integer() });
