-- Automations with a `github` trigger fire on the GitHub App's deliveries (/webhooks/github-app), which are in no
-- team webhook's delivery log: their firings name GitHub's delivery (X-GitHub-Delivery) and the kind of event
-- instead of a logged delivery. A firing has one origin or the other; a logged delivery still fires each
-- automation once.
ALTER TABLE automation_firings DROP CONSTRAINT automation_firings_pkey;
ALTER TABLE automation_firings ALTER COLUMN delivery_seq DROP NOT NULL;
ALTER TABLE automation_firings ADD COLUMN github_delivery_id text, ADD COLUMN github_event text;
ALTER TABLE automation_firings ADD CONSTRAINT automation_firings_origin
  CHECK ((delivery_seq IS NOT NULL AND github_delivery_id IS NULL) OR (delivery_seq IS NULL AND github_delivery_id IS NOT NULL));
CREATE UNIQUE INDEX automation_firings_delivery ON automation_firings (delivery_seq, automation_id)
  WHERE delivery_seq IS NOT NULL;
