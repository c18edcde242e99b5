import { type Static, Type } from 'typebox';

export const TeamParams = Type.Object({ teamUid: Type.String({ minLength: 1, maxLength: 64 }) });

export const SetBudgetBody = Type.Object(
  {
    monthly_budget_usd: Type.Number({ minimum: 0, maximum: 1e9, description: 'USD per calendar month (UTC)' }),
    warn_at_percent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 80, description: 'Share of the budget from which it warns' }),
    ),
  },
  { additionalProperties: false },
);
export type SetBudgetBody = Static<typeof SetBudgetBody>;

export const TeamSpend = Type.Object({
  team_uid: Type.String(),
  month_start: Type.String({ format: 'date-time', description: 'Start of the current calendar month (UTC)' }),
  month_spend_usd: Type.Number({ description: "Inference cost of the team's runs created this month" }),
  monthly_budget_usd: Type.Union([Type.Number(), Type.Null()], { description: 'null: no budget' }),
  warn_at_percent: Type.Union([Type.Integer(), Type.Null()]),
  status: Type.Union([Type.Literal('none'), Type.Literal('ok'), Type.Literal('warning'), Type.Literal('exceeded')], {
    description: '`warning`: past warn_at_percent; `exceeded`: new runs are refused; `none`: no budget',
  }),
});
export type TeamSpend = Static<typeof TeamSpend>;
