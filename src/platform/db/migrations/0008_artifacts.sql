-- Artifacts: the execution that reported them, their blob (files, screenshots, plan text) and, for links to
-- pull requests and tickets, the canonical URL the external-reference lookup searches.
ALTER TABLE artifacts
  ADD COLUMN execution_id integer,
  ADD COLUMN blob_key text,
  ADD COLUMN content_type text,
  ADD COLUMN size_bytes bigint,
  ADD COLUMN canonical_url text;

CREATE INDEX artifacts_canonical_url ON artifacts (team_uid, canonical_url) WHERE canonical_url IS NOT NULL;
