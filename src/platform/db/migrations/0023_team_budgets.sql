-- Team monthly budgets (issue 29), set by instance administrators: a team whose runs created this calendar month
-- (UTC) cost at least `monthly_budget_usd` (request_usage.inference_cost) has its new runs refused with 403
-- budget_exceeded; from `warn_at_percent` of it on, the team's budget reads as a warning. No row: no budget.
CREATE TABLE team_budgets (
  team_uid text PRIMARY KEY REFERENCES teams (uid) ON DELETE CASCADE,
  monthly_budget_usd numeric NOT NULL CHECK (monthly_budget_usd >= 0),
  warn_at_percent integer NOT NULL DEFAULT 80 CHECK (warn_at_percent BETWEEN 1 AND 100),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
