import type { Timestamp } from '../platform/db/columns.js';

export interface SecretGrantsTable {
  team_uid: string;
  secret_name: string;
  grantee_type: 'member' | 'agent' | 'environment';
  grantee_uid: string;
  created_at: Timestamp;
}

export interface SecretsTable {
  team_uid: string;
  name: string;
  iv: Buffer;
  auth_tag: Buffer;
  ciphertext: Buffer;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The secrets slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface SecretsTables {
  secret_grants: SecretGrantsTable;
  secrets: SecretsTable;
}
