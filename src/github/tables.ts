import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../platform/db/columns.js';

export interface GitHubLinksTable {
  id: Generated<string>;
  team_uid: string;
  /** bigint: read as a string. */
  installation_id: ColumnType<string | null, number | null | undefined, never>;
  account_login: string | null;
  token_secret: string | null;
  created_at: Timestamp;
}

export interface GitHubThreadRepliesTable {
  run_id: string;
  /** bigint: read as a string. */
  installation_id: ColumnType<string, number, never>;
  owner: string;
  repo: string;
  comment_id: ColumnType<string, number, never>;
  outcome_posted: Generated<boolean>;
  created_at: Timestamp;
}

export interface GitHubTables {
  github_links: GitHubLinksTable;
  github_thread_replies: GitHubThreadRepliesTable;
}
