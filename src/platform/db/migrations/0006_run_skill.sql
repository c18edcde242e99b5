-- The skill a run was created with, as resolved at creation ({name, description, full_path}).
ALTER TABLE runs ADD COLUMN agent_skill jsonb;
