-- Judge scores. A scorer is a team's definition of how to grade a run: a rubric, labels with their scores,
-- and the score that passes. A judge run (source RUN_SCORER) is dispatched for a run and given scorers; its
-- verdicts land in run_scores, one per scorer and judge run (a judge that answers again replaces its verdict).
CREATE TABLE scorers (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  team_uid text NOT NULL REFERENCES teams (uid) ON DELETE CASCADE,
  name text NOT NULL,
  rubric text NOT NULL,
  labels jsonb NOT NULL,
  passing_score double precision NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (team_uid, name)
);

CREATE TABLE run_scores (
  scored_run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  scorer_id integer NOT NULL REFERENCES scorers (id) ON DELETE CASCADE,
  judge_run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  classification text NOT NULL,
  score double precision NOT NULL,
  passed boolean NOT NULL,
  reason text NOT NULL,
  failed boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (scored_run_id, scorer_id, judge_run_id)
);
CREATE INDEX run_scores_judge ON run_scores (judge_run_id);
