import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import type { Caller } from '../../identities/index.js';
import { mapWithLimit } from '../../platform/concurrency.js';
import { invalidRequest } from '../../platform/http/errors.js';
import { parseRepoSpec, repoKey } from '../github.js';
import type { RunActivityLookup } from '../run-activity.js';
import type { EnvironmentRepository, EnvironmentsService } from '../service.js';
import type { RepoSkill, RepoSkills, SkillCatalog } from './catalog.js';
import { GitFetchError } from './git.js';
import type { ListAgentsQuery, ListAgentsResponse, SkillVariant } from './schemas.js';
import { matchRank, parseSkillSpec, skillId, specAliases, specNamesRepo } from './spec.js';

export interface SkillsServiceOptions {
  environments: EnvironmentsService;
  catalog: SkillCatalog;
  runActivity: RunActivityLookup;
  /** Skills the team's self-hosted workers found in their own directories. */
  workerSkills?: (teamUid: string) => Promise<WorkerSkill[]>;
  /** Skills the team's factory definitions declare (skills/<name>/SKILL.md). */
  factorySkills?: (teamUid: string, db?: Kysely<DB>) => Promise<FactorySkill[]>;
}

export interface FactorySkill {
  factory: string;
  name: string;
  description: string;
  prompt: string;
}

/** A factory skill's ID, usable as a skill spec: `<factory>:skills/<name>/SKILL.md`. */
export const factorySkillPath = (name: string) => `skills/${name}/SKILL.md`;

export interface WorkerSkill {
  worker_host: string;
  skill_path: string;
  name: string;
  description: string;
  base_prompt: string;
}

/** A skill a run can use: what run creation needs from a skill spec. */
export interface ResolvedSkill {
  /** `owner/repo:path/to/SKILL.md` */
  id: string;
  name: string;
  description: string;
  base_prompt: string;
  /** Path of the SKILL.md inside its repository. */
  full_path: string;
}

/** Repositories fetched at once: each fetch is a git process. */
const FETCH_CONCURRENCY = 4;

const byName = (a: string, b: string) =>
  a.toLowerCase().localeCompare(b.toLowerCase(), 'en') || (a < b ? -1 : a > b ? 1 : 0);

/**
 * Agents (skills) are the SKILL.md files in the repositories of a team's environments. Listing one repository
 * (`repo=`) may name any repository the git base URL serves; resolving a skill spec for a run searches only the
 * repositories of environments the team can reach, so a run cannot pull instructions from an arbitrary
 * repository by naming it.
 */
export class SkillsService {
  constructor(private readonly options: SkillsServiceOptions) {}

  /** The agent list, plus warnings (repositories skipped or served from an earlier revision) for the log. */
  async list(caller: Caller, query: ListAgentsQuery): Promise<ListAgentsResponse & { warnings: string[] }> {
    const repositories = await this.options.environments.accessibleRepositories(caller.teamUid);
    const warnings: string[] = [];
    let fetched: Array<{ repository: EnvironmentRepository; skills: RepoSkills }>;
    if (query.repo !== undefined) {
      const ref = parseRepoSpec(query.repo);
      if (!ref) throw invalidRequest(`repo "${query.repo}" must be owner/repo with GitHub owner and repository names`);
      const repository = repositories.find((candidate) => repoKey(candidate.ref) === repoKey(ref)) ?? {
        ref,
        environments: [],
      };
      try {
        fetched = [
          {
            repository: { ...repository, ref },
            skills: await this.options.catalog.skillsOf(ref, { refresh: query.refresh }),
          },
        ];
      } catch (error) {
        if (error instanceof GitFetchError) throw invalidRequest(error.message);
        throw error;
      }
    } else {
      // One broken repository is skipped (and logged) so that it does not hide the others.
      fetched = (
        await mapWithLimit(repositories, FETCH_CONCURRENCY, async (repository) => {
          try {
            return {
              repository,
              skills: await this.options.catalog.skillsOf(repository.ref, { refresh: query.refresh }),
            };
          } catch (error) {
            if (!(error instanceof GitFetchError)) throw error;
            warnings.push(error.message);
            return null;
          }
        })
      ).filter((entry) => entry !== null);
    }

    const variants: Array<{ name: string; aliases: string[]; variant: SkillVariant }> = [];
    for (const { repository, skills } of fetched) {
      if (skills.warning) warnings.push(skills.warning);
      for (const skill of skills.skills) {
        if (skill.error !== null && !query.include_malformed_skills) continue;
        variants.push({
          name: skill.name,
          aliases: specAliases(repository.ref, skill),
          variant: this.variant(repository, skill),
        });
      }
    }
    if (query.repo === undefined) {
      for (const skill of (await this.options.workerSkills?.(caller.teamUid)) ?? []) {
        const id = `${skill.worker_host}:${skill.skill_path}`;
        const source = {
          owner: skill.worker_host,
          name: skill.worker_host,
          skill_path: skill.skill_path,
          worker_host: skill.worker_host,
        };
        variants.push({
          name: skill.name,
          aliases: [id],
          variant: { id, description: skill.description, base_prompt: skill.base_prompt, source, environments: [] },
        });
      }
    }
    if (query.repo === undefined) {
      for (const skill of (await this.options.factorySkills?.(caller.teamUid)) ?? []) {
        const id = `${skill.factory}:${factorySkillPath(skill.name)}`;
        const source = { owner: 'factory', name: skill.factory, skill_path: factorySkillPath(skill.name) };
        variants.push({
          name: skill.name,
          aliases: [id],
          variant: { id, description: skill.description, base_prompt: skill.prompt, source, environments: [] },
        });
      }
    }
    const lastRuns = await this.options.runActivity.bySkillSpec(
      { teamUid: caller.teamUid, principalUid: caller.principal.uid },
      [...new Set(variants.flatMap((entry) => entry.aliases))],
    );

    const agents = new Map<string, { variants: SkillVariant[]; lastRun: number }>();
    for (const { name, aliases, variant } of variants) {
      const lastRun = Math.max(0, ...aliases.map((alias) => lastRuns.get(alias)?.getTime() ?? 0));
      if (lastRun > 0) variant.last_run_timestamp = new Date(lastRun).toISOString();
      const agent = agents.get(name) ?? { variants: [], lastRun: 0 };
      agent.variants.push(variant);
      agent.lastRun = Math.max(agent.lastRun, lastRun);
      agents.set(name, agent);
    }
    const ordered = [...agents.entries()].sort(
      ([nameA, a], [nameB, b]) => (query.sort_by === 'last_run' ? b.lastRun - a.lastRun : 0) || byName(nameA, nameB),
    );
    return {
      agents: ordered.map(([name, agent]) => ({
        name,
        variants: agent.variants.sort((a, b) => (a.id < b.id ? -1 : 1)),
      })),
      warnings,
    };
  }

  /**
   * Finds the skill a spec names (`repo:name`, `owner/repo:name`, `repo:path/to/SKILL.md`,
   * `owner/repo:path/to/SKILL.md`) among the repositories of the team's environments; null when none has it.
   * Throws 400 invalid_request when the spec is ambiguous (one repository name under two owners), when the
   * skill it names is malformed, or when a repository it may be in could not be fetched.
   */
  async resolveSkill(teamUid: string, spec: string, db?: Kysely<DB>): Promise<ResolvedSkill | null> {
    const parsed = parseSkillSpec(spec);
    if (!parsed) return null;
    // A factory's own skills come first: `<factory>:<name>` or `<factory>:skills/<name>/SKILL.md`.
    if (parsed.owner === null) {
      const declared = (await this.options.factorySkills?.(teamUid, db)) ?? [];
      const skill = declared.find(
        (candidate) =>
          candidate.factory === parsed.repo &&
          [candidate.name, factorySkillPath(candidate.name)].includes(parsed.target),
      );
      if (skill) {
        const path = factorySkillPath(skill.name);
        return {
          id: `${skill.factory}:${path}`,
          name: skill.name,
          description: skill.description,
          base_prompt: skill.prompt,
          full_path: path,
        };
      }
    }
    const candidates = (await this.options.environments.accessibleRepositories(teamUid, db)).filter((repository) =>
      specNamesRepo(parsed, repository.ref),
    );
    const failures: string[] = [];
    const matches = (
      await mapWithLimit(candidates, FETCH_CONCURRENCY, async ({ ref }) => {
        let skills: RepoSkills;
        try {
          skills = await this.options.catalog.skillsOf(ref, { refresh: false });
        } catch (error) {
          if (!(error instanceof GitFetchError)) throw error;
          failures.push(error.message);
          return null;
        }
        const ranked = skills.skills
          .map((skill) => ({ skill, rank: matchRank(parsed, skill) }))
          .filter((entry): entry is { skill: RepoSkill; rank: number } => entry.rank !== null)
          .sort((a, b) => a.rank - b.rank || (a.skill.path < b.skill.path ? -1 : 1));
        const best = ranked.find((entry) => entry.skill.error === null) ?? ranked[0];
        return best ? { ref, skill: best.skill } : null;
      })
    ).filter((match) => match !== null);

    if (matches.length > 1) {
      const ids = matches.map(({ ref, skill }) => skillId(ref, skill.path)).join(', ');
      throw invalidRequest(`skill "${spec}" is ambiguous: it names ${ids}; use owner/repo:path/to/SKILL.md`);
    }
    const match = matches[0];
    if (!match) {
      if (failures.length > 0) throw invalidRequest(`skill "${spec}" could not be looked up: ${failures.join('; ')}`);
      return null;
    }
    const id = skillId(match.ref, match.skill.path);
    if (match.skill.error !== null) throw invalidRequest(`skill ${id} cannot be used: ${match.skill.error}`);
    return {
      id,
      name: match.skill.name,
      description: match.skill.description,
      base_prompt: match.skill.basePrompt,
      full_path: match.skill.path,
    };
  }

  private variant(repository: EnvironmentRepository, skill: RepoSkill): SkillVariant {
    return {
      id: skillId(repository.ref, skill.path),
      description: skill.description,
      base_prompt: skill.basePrompt,
      source: { owner: repository.ref.owner, name: repository.ref.repo, skill_path: skill.path },
      environments: repository.environments,
      ...(skill.error !== null ? { error: skill.error } : {}),
    };
  }
}
