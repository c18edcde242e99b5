import { type Static, Type } from 'typebox';

export const ModelItem = Type.Object({
  id: Type.String(),
  display_name: Type.String(),
  provider: Type.String({ description: 'OPENAI, ANTHROPIC, GOOGLE, or UNKNOWN for any OpenAI-compatible server' }),
  vision_supported: Type.Boolean(),
  description: Type.Optional(Type.String()),
  reasoning_level: Type.Optional(Type.String()),
  cost: Type.Object(
    {
      currency: Type.Literal('USD'),
      input_per_million_tokens: Type.Number(),
      output_per_million_tokens: Type.Number(),
    },
    { description: 'What a run pays for the tokens it uses' },
  ),
  disable_reason: Type.Optional(Type.String({ description: 'Present when the model cannot be used now' })),
  disabled_reason_detail: Type.Optional(Type.String({ description: 'Why, in words a person can act on' })),
});
export type ModelItem = Static<typeof ModelItem>;

export const ModelList = Type.Object({
  default_model_id: Type.Union([Type.String(), Type.Null()]),
  models: Type.Array(ModelItem),
});
export type ModelList = Static<typeof ModelList>;
