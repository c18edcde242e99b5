import { type Static, Type } from 'typebox';

/** Wire schemas of the agent (skill) list. */

export const ListAgentsQuery = Type.Object({
  repo: Type.Optional(
    Type.String({ maxLength: 200, description: '`owner/repo`: list the skills of this repository only' }),
  ),
  refresh: Type.Boolean({ default: false, description: 'Fetch the repositories again instead of using the cache' }),
  sort_by: Type.Union([Type.Literal('name'), Type.Literal('last_run')], { default: 'name' }),
  include_malformed_skills: Type.Boolean({
    default: false,
    description: 'Also list SKILL.md files that could not be parsed, with `error`',
  }),
});
export type ListAgentsQuery = Static<typeof ListAgentsQuery>;

export const SkillVariant = Type.Object({
  id: Type.String({ description: '`owner/repo:path/to/SKILL.md`' }),
  description: Type.String(),
  base_prompt: Type.String({ description: 'The Markdown body of the SKILL.md' }),
  source: Type.Object({
    owner: Type.String(),
    name: Type.String(),
    skill_path: Type.String(),
    worker_host: Type.Optional(
      Type.String({ description: 'The self-hosted worker that reported the skill (its path is on that machine)' }),
    ),
  }),
  environments: Type.Array(Type.Object({ uid: Type.String(), name: Type.String() })),
  last_run_timestamp: Type.Optional(Type.String({ format: 'date-time' })),
  error: Type.Optional(Type.String({ description: 'Why the SKILL.md could not be parsed (malformed skills only)' })),
});
export type SkillVariant = Static<typeof SkillVariant>;

export const ListAgentsResponse = Type.Object({
  agents: Type.Array(Type.Object({ name: Type.String(), variants: Type.Array(SkillVariant) })),
});
export type ListAgentsResponse = Static<typeof ListAgentsResponse>;
