import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../platform/db/columns.js';

export interface GitHubLinksTable {
  id: Generated<string>;
  team_uid: string;
  /** bigint: read as a string. */
  installation_id: ColumnType<string | null, number | null | undefined, never>;
  account_login: string | null;
  token_secret: string | null;
  /** The installation link's service identity (a users row), made on first use; null for a token secret's link. */
  service_user_uid: Generated<string | null>;
  created_at: Timestamp;
}

/** A link's allow-list: a GitHub login (lower-cased) mapped to a Hangar user of the team. */
export interface GitHubAllowedLoginsTable {
  team_uid: string;
  /** bigint: read as a string. */
  installation_id: ColumnType<string, number, never>;
  login: string;
  user_uid: string;
  created_at: Timestamp;
}

/** A delivery that started runs, for the hourly limits per repository and per GitHub user (both lower-cased). */
export interface GitHubTriggerStartsTable {
  id: Generated<string>;
  repository: string;
  login: string;
  started_at: Timestamp;
}

/** A refusal answered in a thread: once per GitHub user, thread and reason. */
export interface GitHubTriggerRefusalsTable {
  repository: string;
  number: ColumnType<string, number, never>;
  login: string;
  reason: 'access' | 'rate';
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
  github_allowed_logins: GitHubAllowedLoginsTable;
  github_trigger_starts: GitHubTriggerStartsTable;
  github_trigger_refusals: GitHubTriggerRefusalsTable;
}
