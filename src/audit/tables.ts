import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../platform/db/columns.js';

export interface AuditLogTable {
  id: Generated<string>;
  at: Generated<Timestamp>;
  team_uid: string | null;
  actor_type: string;
  actor_uid: string;
  key_uid: string | null;
  client_address: string | null;
  action: string;
  target: string | null;
  details: Json<Record<string, unknown>>;
}

export interface AuditTables {
  audit_log: AuditLogTable;
}
