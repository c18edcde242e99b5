import { parse as parseYaml } from 'yaml';

/** Folders where agent tools keep skills; a skill is `<root>/<folder>/SKILL.md` (folders may nest). */
export const SKILL_ROOTS = [
  '.agents/skills',
  '.claude/skills',
  '.warp/skills',
  '.codex/skills',
  '.cursor/skills',
  '.gemini/skills',
  '.github/skills',
  'skills',
] as const;

/** A SKILL.md larger than this is reported as malformed rather than read. */
export const MAX_SKILL_BYTES = 256 * 1024;

export function isSkillPath(filePath: string): boolean {
  return SKILL_ROOTS.some(
    (root) => filePath.startsWith(`${root}/`) && /^[^/].*\/SKILL\.md$/.test(filePath.slice(root.length + 1)),
  );
}

/** The folder that holds a SKILL.md: the skill's name when its front matter does not give one. */
export function skillFolder(filePath: string): string {
  const parts = filePath.split('/');
  return parts[parts.length - 2] ?? filePath;
}

export type ParsedSkill =
  | { ok: true; name: string; description: string; basePrompt: string }
  | { ok: false; name: string; error: string };

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * Reads a SKILL.md: YAML front matter between `---` lines with a `name` and a `description`, then the Markdown
 * body, which is the skill's base prompt. Anything else is reported with the reason, never thrown.
 */
export function parseSkill(filePath: string, text: string): ParsedSkill {
  const folder = skillFolder(filePath);
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    return { ok: false, name: folder, error: 'no YAML front matter: the file must start with a "---" line' };
  }
  const end = lines.findIndex((line, index) => index > 0 && line.trimEnd() === '---');
  if (end < 0) return { ok: false, name: folder, error: 'the YAML front matter is not closed by a "---" line' };

  let front: unknown;
  try {
    front = parseYaml(lines.slice(1, end).join('\n'));
  } catch (error) {
    const reason = ((error as Error).message ?? String(error)).split('\n')[0];
    return { ok: false, name: folder, error: `the front matter is not valid YAML: ${reason}` };
  }
  if (front === null || typeof front !== 'object' || Array.isArray(front)) {
    return { ok: false, name: folder, error: 'the front matter must be a YAML mapping with name and description' };
  }
  const fields = front as Record<string, unknown>;
  const name = nonEmptyString(fields.name);
  const description = nonEmptyString(fields.description);
  if (name === null) return { ok: false, name: folder, error: 'the front matter has no name (a non-empty string)' };
  if (description === null)
    return { ok: false, name, error: 'the front matter has no description (a non-empty string)' };
  return {
    ok: true,
    name,
    description,
    basePrompt: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
  };
}
