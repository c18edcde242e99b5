import type { Generated } from 'kysely';
import type { Timestamp } from '../platform/db/columns.js';

export interface FactoriesTable {
  uid: string;
  team_uid: string;
  name: string;
  is_default: Generated<boolean>;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FactorySkillsTable {
  factory_uid: string;
  team_uid: string;
  name: string;
  description: string;
  prompt: string;
  updated_at: Timestamp;
}

/** The factory slice's tables, as Kysely sees them (src/database.ts composes every slice's into DB). */
export interface FactoryTables {
  factories: FactoriesTable;
  factory_skills: FactorySkillsTable;
}
