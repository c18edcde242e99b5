-- Who may start runs from GitHub (issue 47, finding 1). Before, any GitHub user's comment on a linked installation's
-- repository started a run as the environment's creator.

-- Each installation link's service identity: the principal a GitHub-started run is created as when the GitHub user
-- maps to no Hangar user. A users row with no membership, no API key and no grant of its own, made on first use.
ALTER TABLE github_links ADD COLUMN service_user_uid text REFERENCES users (uid) ON DELETE SET NULL;

-- The link's allow-list: GitHub logins (lower-cased) an instance administrator maps to Hangar users of the team.
-- A listed login starts runs without write access to the repository, and its runs are created as the mapped user.
-- Kept per (team, installation) rather than on the link's row, so that linking the installation again keeps it.
CREATE TABLE github_allowed_logins (
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  installation_id bigint NOT NULL,
  login text NOT NULL CHECK (login = lower(login)),
  user_uid text NOT NULL REFERENCES users (uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (team_uid, installation_id, login)
);

-- Deliveries that started runs, by repository and GitHub user (both lower-cased): the hourly limits read them.
-- Rows older than the window are deleted as new ones come.
CREATE TABLE github_trigger_starts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  repository text NOT NULL,
  login text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX github_trigger_starts_repository ON github_trigger_starts (repository, started_at);
CREATE INDEX github_trigger_starts_login ON github_trigger_starts (login, started_at);
CREATE INDEX github_trigger_starts_age ON github_trigger_starts (started_at);

-- Refusals Hangar answered in a thread: once per GitHub user, thread and reason, however many comments they post.
CREATE TABLE github_trigger_refusals (
  repository text NOT NULL,
  number bigint NOT NULL,
  login text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('access', 'rate')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (repository, number, login, reason)
);
CREATE INDEX github_trigger_refusals_age ON github_trigger_refusals (created_at);
