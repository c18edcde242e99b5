-- An agent identity's name is unique in its team (issue 26), among the agents made through the API and within each
-- factory definition, as webhooks' are unique within their factory: two definition directories may each have their
-- own `reviewer`. Duplicates made before keep the oldest agent's name; the others get their uid appended, so nothing
-- is lost and each stays findable.
UPDATE agent_identities a SET name = left(a.name, 170) || ' (' || a.uid || ')'
WHERE EXISTS (
  SELECT 1 FROM agent_identities b
  WHERE b.team_uid = a.team_uid AND b.name = a.name AND coalesce(b.factory_uid, '') = coalesce(a.factory_uid, '')
    AND (b.created_at, b.uid) < (a.created_at, a.uid)
);
CREATE UNIQUE INDEX agent_identities_team_name ON agent_identities (team_uid, coalesce(factory_uid, ''), name);
