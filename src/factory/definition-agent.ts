import { MAX_SKILL_BYTES, parseSkill } from '../environments/index.js';
import { Fields, readMarkdown } from './definition-fields.js';
import type { AgentDefinition, DefinitionError, References, SkillDefinition } from './definition-types.js';

/** `agents/<name>/agent.md` and `skills/<name>/SKILL.md`: front matter, then the prompt as Markdown. */

const AGENT_KEYS = ['description', 'model', 'harness', 'environment', 'worker_host', 'runner', 'skills'] as const;
/** AgentConfig's limits (base_prompt, model_id, harness type, environment_id, worker_host), so that runs accept them. */
const MAX_PROMPT = 100_000;

export function parseAgent(
  file: string,
  name: string,
  text: string,
  refs: References,
  errors: DefinitionError[],
): AgentDefinition | null {
  const markdown = readMarkdown(file, text, errors);
  if (!markdown) return null;
  const fields = new Fields(markdown.mapping, errors);
  fields.allowOnly(AGENT_KEYS, 'the front matter of an agent');

  const description = fields.string('description');
  const model = fields.string('model', { maxLength: 200 });
  const harness = fields.string('harness', { maxLength: 63 });
  const environment = fields.string('environment', { maxLength: 64 });
  const workerHost = fields.string('worker_host', { maxLength: 200 });
  const runner = fields.string('runner');
  if (runner && !refs.runners.has(runner)) {
    const defined = refs.runners.size > 0 ? `one of ${[...refs.runners].join(', ')}` : 'none is defined';
    fields.fail(
      'runner',
      `Runner "${runner}" is not defined in this definition; expected the name of a file runners/<name>.yaml (${defined}).`,
    );
  }
  const skills = fields.stringList('skills') ?? [];
  skills.forEach((skill, index) => {
    if (refs.skills.has(skill)) return;
    const defined = refs.skills.size > 0 ? `one of ${[...refs.skills].join(', ')}` : 'none is defined';
    fields.fail(
      `skills[${index}]`,
      `Skill "${skill}" is not defined in this definition; expected the name of a folder skills/<name>/ with a SKILL.md (${defined}).`,
    );
  });
  if (markdown.body.length > MAX_PROMPT) {
    errors.push({
      file,
      line: markdown.closeLine + 1,
      message: `The prompt is ${markdown.body.length} characters long; the limit is ${MAX_PROMPT}.`,
    });
  }

  return {
    name,
    file,
    description: description ?? null,
    prompt: markdown.body,
    model: model ?? null,
    harness: harness ?? null,
    environment: environment ?? null,
    workerHost: workerHost ?? null,
    runner: runner ?? null,
    skills,
    lines: markdown.mapping.lines,
  };
}

/**
 * SKILL.md is the format agent tools share, so parseSkill decides what a valid skill is; the front matter is also
 * read here for the lines of its errors. Other keys (license, allowed-tools, ...) belong to that format and are kept.
 */
export function parseSkillFile(
  file: string,
  name: string,
  text: string,
  errors: DefinitionError[],
): SkillDefinition | null {
  if (Buffer.byteLength(text, 'utf8') > MAX_SKILL_BYTES) {
    errors.push({
      file,
      line: null,
      message: `SKILL.md is larger than ${MAX_SKILL_BYTES / 1024} KiB; shorten it or move material into other files of the folder.`,
    });
    return null;
  }
  const markdown = readMarkdown(file, text, errors);
  if (!markdown) return null;
  const fields = new Fields(markdown.mapping, errors);
  const skill = parseSkill(file, text);
  if (!skill.ok) {
    // After readMarkdown succeeded, only a missing name or description is left to report.
    errors.push({ file, line: markdown.mapping.start, message: `The SKILL.md is not valid: ${skill.error}.` });
    return null;
  }
  if (skill.name !== name) {
    fields.fail(
      'name',
      `The skill's name "${skill.name}" differs from its folder skills/${name}/; make the front matter's name "${name}" or rename the folder.`,
    );
  }
  return { name, file, description: skill.description, prompt: skill.basePrompt };
}
