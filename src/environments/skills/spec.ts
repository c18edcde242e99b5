import { ownerProblem, type RepoRef, repoKey, repoProblem } from '../github.js';
import { SKILL_ROOTS, skillFolder } from './parse.js';

/**
 * A skill spec names a skill in a repository: `repo:name`, `owner/repo:name`, `repo:path/to/SKILL.md` or
 * `owner/repo:path/to/SKILL.md`. A name is the skill's front-matter name or its folder name.
 */
export interface SkillSpec {
  owner: string | null;
  repo: string;
  /** A path inside the repository (it contains a `/`) or a name. */
  target: string;
  byPath: boolean;
}

export function parseSkillSpec(spec: string): SkillSpec | null {
  const colon = spec.indexOf(':');
  if (colon < 0) return null;
  const source = spec.slice(0, colon).split('/');
  const target = spec.slice(colon + 1);
  if (target === '' || /\s/.test(target) || source.length > 2) return null;
  const repo = source[source.length - 1]!;
  const owner = source.length === 2 ? source[0]! : null;
  if (repoProblem(repo) !== null || (owner !== null && ownerProblem(owner) !== null)) return null;
  return { owner, repo, target, byPath: target.includes('/') };
}

/** Whether a repository is one the spec can name (GitHub names compare without case). */
export function specNamesRepo(spec: SkillSpec, ref: RepoRef): boolean {
  if (spec.owner !== null) return repoKey(ref) === repoKey({ owner: spec.owner, repo: spec.repo });
  return ref.repo.toLowerCase() === spec.repo.toLowerCase();
}

export interface NamedSkill {
  path: string;
  name: string;
}

/**
 * How well a skill matches the spec's target, lower is better, null for no match: an exact path; then a
 * front-matter name before a folder name, each in the order of SKILL_ROOTS (so `.agents/skills/deploy` wins
 * over a copy in `.claude/skills/deploy`).
 */
export function matchRank(spec: SkillSpec, skill: NamedSkill): number | null {
  if (spec.byPath) {
    const folderPath = spec.target.replace(/\/+$/, '');
    return skill.path === spec.target || skill.path === `${folderPath}/SKILL.md` ? 0 : null;
  }
  const root = SKILL_ROOTS.findIndex((candidate) => skill.path.startsWith(`${candidate}/`));
  if (skill.name === spec.target) return 1 + root;
  if (skillFolder(skill.path) === spec.target) return 1 + SKILL_ROOTS.length + root;
  return null;
}

/** The canonical id of a skill: `owner/repo:path/to/SKILL.md`. */
export function skillId(ref: RepoRef, skillPath: string): string {
  return `${ref.owner}/${ref.repo}:${skillPath}`;
}

/** Every spec that names this skill, so runs created with a short form count as runs of it. */
export function specAliases(ref: RepoRef, skill: NamedSkill): string[] {
  const targets = [skill.path, skill.name, skillFolder(skill.path)];
  const aliases = targets.flatMap((target) => [`${ref.owner}/${ref.repo}:${target}`, `${ref.repo}:${target}`]);
  return [...new Set(aliases)];
}
