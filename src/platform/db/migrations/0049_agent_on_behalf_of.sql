-- An agent identity whose API key may create runs on behalf of a member of its team (issue 52, field 1): the run's
-- creator is then that member and its executor the agent. Off unless a team administrator turns it on.
ALTER TABLE agent_identities ADD COLUMN on_behalf_of_enabled boolean NOT NULL DEFAULT false;
