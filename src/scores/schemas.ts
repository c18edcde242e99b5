import { type Static, Type } from 'typebox';
import { AgentConfig } from '../runs/index.js';

/** Wire schemas of the scores slice: scorers, judge dispatch and verdicts. */

const Label = Type.Object(
  { label: Type.String({ minLength: 1, maxLength: 100 }), score: Type.Number() },
  { additionalProperties: false },
);

export const CreateScorerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    rubric: Type.String({ minLength: 1, maxLength: 20_000, description: 'What the judge looks for, in plain words' }),
    labels: Type.Array(Label, {
      minItems: 1,
      maxItems: 20,
      description: 'The classifications a judge may give, each with its score',
    }),
    passing_score: Type.Number({ description: 'A verdict whose label scores at least this passes' }),
  },
  { additionalProperties: false },
);
export type CreateScorerBody = Static<typeof CreateScorerBody>;

export const Scorer = Type.Object({
  scorer_id: Type.Integer(),
  name: Type.String(),
  rubric: Type.String(),
  labels: Type.Array(Label),
  passing_score: Type.Number(),
  created_at: Type.String({ format: 'date-time' }),
});
export type Scorer = Static<typeof Scorer>;

export const ScorerParams = Type.Object({ scorerId: Type.Integer({ minimum: 1 }) });
export const ScorerList = Type.Object({ scorers: Type.Array(Scorer) });

export const JudgeBody = Type.Object(
  {
    scorer_ids: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 20, uniqueItems: true }),
    config: Type.Optional(AgentConfig),
  },
  { additionalProperties: false },
);
export type JudgeBody = Static<typeof JudgeBody>;

/** One verdict as sent; checked one by one so that a bad verdict is rejected alone. */
export const Verdict = Type.Object(
  {
    scorer_id: Type.Integer(),
    classification: Type.String({ minLength: 1, maxLength: 100 }),
    reason: Type.String({ maxLength: 20_000 }),
    failed: Type.Boolean({ description: 'The judge could not evaluate (the verdict is kept, and does not pass)' }),
  },
  { additionalProperties: false },
);
export type Verdict = Static<typeof Verdict>;

export const ScoresBody = Type.Object(
  {
    results: Type.Array(Type.Unknown(), {
      minItems: 1,
      maxItems: 100,
      description: 'Verdicts `{scorer_id, classification, reason, failed}`',
    }),
  },
  { additionalProperties: false },
);

export const VerdictStatus = Type.Object({
  scorer_id: Type.Union([Type.Integer(), Type.Null()]),
  status: Type.Union([Type.Literal('accepted'), Type.Literal('rejected')]),
  error: Type.Optional(Type.String()),
});
export type VerdictStatus = Static<typeof VerdictStatus>;
export const ScoresResponse = Type.Object({ results: Type.Array(VerdictStatus) });
