-- The audit log (issue 29): who changed what among keys, users, memberships, agents, secrets, MCP servers,
-- environments, webhooks, automations, schedules, budgets and worker keys, when and from where. Rows are only
-- inserted (by the API hook in src/audit/) and deleted by its retention (HANGAR_AUDIT_RETENTION_DAYS); no route
-- changes them. `details` never holds a secret value: only route parameters and fields on an allow list.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The team the change belongs to; null for instance-wide ones (users, teams, instance settings).
  team_uid text,
  actor_type text NOT NULL,
  actor_uid text NOT NULL,
  key_uid text,
  client_address text,
  action text NOT NULL,
  target text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb
);
-- A team's log, newest first (the team admins' read), and everyone's by time (instance admins, retention).
CREATE INDEX audit_log_team_id ON audit_log (team_uid, id DESC);
CREATE INDEX audit_log_at ON audit_log (at);
