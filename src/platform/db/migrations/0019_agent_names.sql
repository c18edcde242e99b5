-- An agent identity's name is unique in its team, as schedules' and webhooks' are (issue 26). Duplicates made
-- before keep the oldest agent's name; the others get their uid appended, so nothing is lost and each stays findable.
UPDATE agent_identities a SET name = left(a.name, 170) || ' (' || a.uid || ')'
WHERE EXISTS (
  SELECT 1 FROM agent_identities b
  WHERE b.team_uid = a.team_uid AND b.name = a.name AND (b.created_at, b.uid) < (a.created_at, a.uid)
);
ALTER TABLE agent_identities ADD CONSTRAINT agent_identities_team_name UNIQUE (team_uid, name);
