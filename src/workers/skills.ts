import fs from 'node:fs';
import path from 'node:path';
import { MAX_SKILL_BYTES, parseSkill } from '../environments/index.js';
import type { ReportedSkill } from './store.js';

/** Folders below a skills directory that are searched for SKILL.md files. */
const MAX_DEPTH = 6;

/**
 * The well-formed SKILL.md files under the worker's skill directories (a malformed one is skipped with a
 * warning). A skill's path is the file's absolute path on the worker, so two directories never collide.
 */
export async function findSkills(directories: string[], warn: (message: string) => void): Promise<ReportedSkill[]> {
  const skills: ReportedSkill[] = [];
  for (const directory of directories) {
    for (const file of await skillFiles(path.resolve(directory), 0)) {
      const stat = await fs.promises.stat(file);
      if (stat.size > MAX_SKILL_BYTES) {
        warn(`${file}: larger than ${MAX_SKILL_BYTES} bytes; skipped`);
        continue;
      }
      const parsed = parseSkill(file, await fs.promises.readFile(file, 'utf8'));
      if (!parsed.ok) {
        warn(`${file}: ${parsed.error}; skipped`);
        continue;
      }
      skills.push({ path: file, name: parsed.name, description: parsed.description, base_prompt: parsed.basePrompt });
    }
  }
  return skills;
}

async function skillFiles(directory: string, depth: number): Promise<string[]> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(directory, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(directory, entry.name);
    if (entry.isFile() && entry.name === 'SKILL.md') files.push(full);
    else if (entry.isDirectory() && depth < MAX_DEPTH && !entry.name.startsWith('.git'))
      files.push(...(await skillFiles(full, depth + 1)));
  }
  return files;
}
