-- Issue 52, fields 6, 7 and 8. A schedule's run mode, stamped on every run it starts (NULL: normal). An agent
-- identity's kind (what it is for in a factory: its foreman takes the factory's work), the secrets its harnesses
-- sign in with, and whose GitHub identity its runs' tokens stand for by default (NULL: no opinion, so EXECUTOR).
-- An environment's last editor beside its creator (the environments before this were last edited by their creator,
-- as far as anything recorded says).
ALTER TABLE schedules
  ADD COLUMN mode text CHECK (mode IN ('normal', 'plan', 'orchestrate'));

ALTER TABLE agent_identities
  ADD COLUMN agent_type text NOT NULL DEFAULT 'CUSTOM'
    CHECK (agent_type IN ('FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM')),
  ADD COLUMN harness_auth_secrets jsonb,
  ADD COLUMN credential_strategy text CHECK (credential_strategy IN ('CREATOR', 'EXECUTOR'));

-- A factory's foreman (agents/foreman/agent.md) is the agent its dispatched work goes to.
UPDATE agent_identities SET agent_type = 'FOREMAN' WHERE factory_uid IS NOT NULL AND name = 'foreman';

ALTER TABLE environments
  ADD COLUMN last_editor_type text CHECK (last_editor_type IN ('user', 'service_account')),
  ADD COLUMN last_editor_uid text;
UPDATE environments SET last_editor_type = creator_type, last_editor_uid = creator_uid;
