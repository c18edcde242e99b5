-- Whether a guest team's admins let runs of the team in an environment another team shares use the team's secrets
-- (issue 47 finding 6): a shared environment's setup is its owner's code, and it runs inside the guest's runs. Unset
-- (the default, also for every share made before): the guest's runs in it get none of the guest team's secrets.
ALTER TABLE environment_access
  ADD COLUMN secrets_allowed_at timestamptz,
  ADD COLUMN secrets_allowed_by text;
