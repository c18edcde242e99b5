import type { NullableTimestamp, Timestamp } from '../platform/db/columns.js';

export interface AgentMessagesTable {
  message_id: string;
  team_uid: string;
  root_run_id: string;
  sender_run_id: string;
  recipient_run_id: string;
  subject: string;
  body: string;
  sent_at: Timestamp;
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
}

/** The messages slice's tables (migration 0045), as Kysely sees them (src/database.ts composes every slice's). */
export interface MessagesTables {
  agent_messages: AgentMessagesTable;
}
