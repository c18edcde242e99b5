import { MAX_WEBHOOKS_PER_FACTORY } from '../webhooks/index.js';
import { parseAgent, parseSkillFile } from './definition-agent.js';
import { parseAutomation } from './definition-automation.js';
import { Fields, readYamlMapping } from './definition-fields.js';
import { parseRunner } from './definition-runner.js';
import type { DefinitionError, FactoryDefinition, References } from './definition-types.js';
import { parseWebhook } from './definition-webhook.js';

export type * from './definition-types.js';

/**
 * A factory definition: the directory of files that `hangar factory plan|apply <dir>` sends as
 * `{ files: { "<relative path>": "<UTF-8 content>" } }`. This module parses and checks it without the database;
 * what needs the database (secrets and webhook UIDs that exist) is left to the plan/apply service.
 */

const NAME = /^[a-z0-9][a-z0-9_-]{0,99}$/;
const NAME_RULE =
  'names must match ^[a-z0-9][a-z0-9_-]{0,99}$ (lowercase letters, digits, _ and -, starting with a letter or digit, at most 100 characters)';

/** The folder kinds: each `<folder>/<name>/` holds one expected file; other files there are supporting material. */
const FOLDERS = {
  automations: { file: 'automation.md', kind: 'automation' },
  agents: { file: 'agent.md', kind: 'agent' },
  skills: { file: 'SKILL.md', kind: 'skill' },
} as const;
type Folder = keyof typeof FOLDERS;

/** The files that matter, sorted out by role. Maps are name -> path of the expected file. */
interface Layout {
  factory: string | null;
  webhooks: Map<string, string>;
  runners: Map<string, string>;
  folders: Record<Folder, Map<string, string>>;
}

/** Paths are relative with `/`; anything that could point outside the directory is refused, not ignored. */
function pathProblem(path: string): string | null {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path))
    return `The path is absolute; send paths relative to the definition's directory.`;
  if (path.includes('\\')) return 'The path contains "\\"; separate directories with "/".';
  const segments = path.split('/');
  if (segments.includes('..'))
    return 'The path contains a ".." segment; send paths inside the definition\'s directory only.';
  if (segments.some((segment) => segment === '' || segment === '.'))
    return 'The path has an empty or "." segment; send normalized relative paths such as webhooks/github.yaml.';
  return null;
}

function nameProblem(name: string, kind: string): string | null {
  return NAME.test(name) ? null : `"${name}" is not a valid ${kind} name: ${NAME_RULE}; rename it.`;
}

/** Sorts the paths into roles, reporting bad paths, bad names, duplicates and folders without their file. */
function layout(paths: string[], errors: DefinitionError[]): Layout {
  const result: Layout = {
    factory: null,
    webhooks: new Map(),
    runners: new Map(),
    folders: { automations: new Map(), agents: new Map(), skills: new Map() },
  };
  const seenFolders = new Map<string, Folder>();
  for (const path of [...paths].sort()) {
    const problem = pathProblem(path);
    if (problem) {
      errors.push({ file: path, line: null, message: problem });
      continue;
    }
    const segments = path.split('/');
    const [top, second] = segments;
    if (path === 'factory.yaml') {
      result.factory = path;
    } else if (top === 'webhooks' && segments.length === 2 && second !== undefined && /\.ya?ml$/.test(second)) {
      addNamedFile(result.webhooks, 'webhook', path, second.replace(/\.ya?ml$/, ''), errors);
    } else if (top === 'runners' && segments.length === 2 && second !== undefined && /\.ya?ml$/.test(second)) {
      addNamedFile(result.runners, 'runner', path, second.replace(/\.ya?ml$/, ''), errors);
    } else if (top !== undefined && second !== undefined && segments.length >= 3 && Object.hasOwn(FOLDERS, top)) {
      const folder = top as Folder;
      seenFolders.set(`${folder}/${second}`, folder);
      if (segments.length === 3 && segments[2] === FOLDERS[folder].file) result.folders[folder].set(second, path);
    }
    // Anything else (README.md, .git/..., notes) is not part of the definition.
  }
  for (const [directory, folder] of seenFolders) checkFolder(directory, folder, result.folders[folder], errors);
  return result;
}

/** A `<folder>/<name>.yaml` file (a webhook, a runner): its name must be valid and defined once. */
function addNamedFile(
  found: Map<string, string>,
  kind: string,
  path: string,
  name: string,
  errors: DefinitionError[],
): void {
  const problem = nameProblem(name, kind);
  if (problem) errors.push({ file: path, line: null, message: problem });
  else if (found.has(name)) {
    errors.push({
      file: path,
      line: null,
      message: `The ${kind} "${name}" is also defined by ${found.get(name)}; keep only one of the two files.`,
    });
  } else found.set(name, path);
}

/** A folder's name must be valid, and the folder must hold its expected file; an invalid one is dropped. */
function checkFolder(directory: string, folder: Folder, found: Map<string, string>, errors: DefinitionError[]): void {
  const name = directory.slice(folder.length + 1);
  const { file, kind } = FOLDERS[folder];
  const problem = nameProblem(name, kind);
  if (problem) {
    errors.push({ file: found.get(name) ?? `${directory}/`, line: null, message: problem });
    found.delete(name);
  } else if (!found.has(name)) {
    errors.push({
      file: `${directory}/`,
      line: null,
      message: `The folder ${directory}/ has no ${file}; add one, or remove the folder.`,
    });
  }
}

function parseFactoryFile(
  text: string,
  errors: DefinitionError[],
): { name: string; description: string | null } | null {
  const mapping = readYamlMapping('factory.yaml', text, errors);
  if (!mapping) return null;
  const fields = new Fields(mapping, errors);
  fields.allowOnly(['name', 'description'], 'factory.yaml');
  const name = fields.string('name', { required: "the factory's name, at most 100 characters", maxLength: 100 });
  const description = fields.string('description');
  return { name: name?.trim() ?? '', description: description ?? null };
}

function byName<T extends { name: string }>(items: Array<T | null>): T[] {
  return items
    .filter((item): item is T => item !== null)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Errors grouped by file, in line order; a file's own errors (line null) first. */
export function compareErrors(a: DefinitionError, b: DefinitionError): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return (a.line ?? 0) - (b.line ?? 0);
}

/**
 * Parses and checks everything that can be checked without the database; every problem is reported, not just the
 * first. The definition is returned only when there is no error at all, so that nothing half-valid gets applied.
 */
export function parseDefinition(files: Record<string, string>): {
  definition: FactoryDefinition | null;
  errors: DefinitionError[];
  /**
   * With errors: the files that have none (and whose skills and agents have none), so that the checks only the
   * database can make still run on them and every problem is reported in one answer. Null without a factory name.
   */
  valid: FactoryDefinition | null;
} {
  const errors: DefinitionError[] = [];
  const found = layout(Object.keys(files), errors);
  const text = (path: string) => files[path] ?? '';

  let factory: { name: string; description: string | null } | null = null;
  if (found.factory === null) {
    const hint = Object.hasOwn(files, 'factory.yml') ? ' (factory.yml is not read: rename it)' : '';
    errors.push({
      file: 'factory.yaml',
      line: null,
      message: `factory.yaml is missing${hint}; add one at the root of the definition with at least a name.`,
    });
  } else {
    factory = parseFactoryFile(text(found.factory), errors);
  }
  if (found.webhooks.size > MAX_WEBHOOKS_PER_FACTORY) {
    errors.push({
      file: 'webhooks/',
      line: null,
      message: `The definition has ${found.webhooks.size} webhooks; a factory may have at most ${MAX_WEBHOOKS_PER_FACTORY}.`,
    });
  }

  // References are checked against the names that have their file, even if that file has errors of its own:
  // one broken agent.md must not also make every automation that uses it an error.
  const refs: References = {
    webhooks: found.webhooks,
    agents: new Set(found.folders.agents.keys()),
    skills: new Set(found.folders.skills.keys()),
    runners: new Set(found.runners.keys()),
  };
  const each = <T>(entries: Map<string, string>, parse: (file: string, name: string) => T) =>
    [...entries].map(([name, file]) => parse(file, name));
  const webhooks = each(found.webhooks, (file, name) => parseWebhook(file, name, text(file), errors));
  const automations = each(found.folders.automations, (file, name) =>
    parseAutomation(file, name, text(file), refs, errors),
  );
  const agents = each(found.folders.agents, (file, name) => parseAgent(file, name, text(file), refs, errors));
  const skills = each(found.folders.skills, (file, name) => parseSkillFile(file, name, text(file), errors));
  const runners = each(found.runners, (file, name) => parseRunner(file, name, text(file), errors));

  errors.sort(compareErrors);
  if (factory === null || !factory.name) return { definition: null, errors, valid: null };
  const whole: FactoryDefinition = {
    name: factory.name,
    description: factory.description,
    webhooks: byName(webhooks),
    automations: byName(automations),
    agents: byName(agents),
    skills: byName(skills),
    runners: byName(runners),
  };
  if (errors.length === 0) return { definition: whole, errors, valid: whole };
  return { definition: null, errors, valid: withoutBroken(whole, errors) };
}

/** The definition less every file with an error, and less what refers to such a file (its problem is reported). */
function withoutBroken(definition: FactoryDefinition, errors: DefinitionError[]): FactoryDefinition {
  const broken = new Set(errors.map((error) => error.file));
  const skills = definition.skills.filter((skill) => !broken.has(skill.file));
  const skillNames = new Set(skills.map((skill) => skill.name));
  const runners = definition.runners.filter((runner) => !broken.has(runner.file));
  const runnerNames = new Set(runners.map((runner) => runner.name));
  const agents = definition.agents.filter(
    (agent) =>
      !broken.has(agent.file) &&
      agent.skills.every((skill) => skillNames.has(skill)) &&
      (agent.runner === null || runnerNames.has(agent.runner)),
  );
  const agentNames = new Set(agents.map((agent) => agent.name));
  return {
    ...definition,
    webhooks: definition.webhooks.filter((webhook) => !broken.has(webhook.file)),
    automations: definition.automations.filter(
      (automation) => !broken.has(automation.file) && (automation.agent === null || agentNames.has(automation.agent)),
    ),
    agents,
    skills,
    runners,
  };
}
