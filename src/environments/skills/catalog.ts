import { mapWithLimit } from '../../platform/concurrency.js';
import { type RepoRef, repoKey } from '../github.js';
import { GitFetchError, type GitMirror } from './git.js';
import { isSkillPath, MAX_SKILL_BYTES, parseSkill, SKILL_ROOTS, skillFolder } from './parse.js';

/** One SKILL.md of a repository: parsed, or with the reason it could not be. */
export interface RepoSkill {
  path: string;
  name: string;
  description: string;
  basePrompt: string;
  /** Set when the file is malformed; the other fields are then best effort. */
  error: string | null;
}

export interface RepoSkills {
  ref: RepoRef;
  commit: string;
  skills: RepoSkill[];
  /** Set when the fetch failed and an earlier revision was used instead. */
  warning?: string;
}

export interface SkillCatalogOptions {
  git: GitMirror;
  /** A repository is fetched again at most this often, unless a caller asks for a refresh. */
  refreshSeconds: number;
  now?: () => number;
}

/**
 * The skills of each repository, cached per revision: a fetch that finds the same commit reuses the parsed
 * files, a new commit replaces them. Concurrent requests for one repository share one fetch.
 */
export class SkillCatalog {
  private readonly heads = new Map<string, { commit: string; fetchedAt: number }>();
  private readonly parsed = new Map<string, RepoSkill[]>();
  private readonly fetching = new Map<string, Promise<string>>();
  /** Repositories whose first fetch failed: not tried again before the interval, so each request stays fast. */
  private readonly failed = new Map<string, { error: GitFetchError; at: number }>();
  private readonly now: () => number;

  constructor(private readonly options: SkillCatalogOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Throws GitFetchError when the repository cannot be fetched and no earlier revision is known. */
  async skillsOf(ref: RepoRef, options: { refresh: boolean }): Promise<RepoSkills> {
    const key = repoKey(ref);
    const known = this.heads.get(key);
    let commit = known?.commit;
    let warning: string | undefined;
    const stale = !known || this.isOld(known.fetchedAt);
    const failure = this.failed.get(key);
    if (!options.refresh && !known && failure && !this.isOld(failure.at)) throw failure.error;
    if (options.refresh || stale) {
      try {
        commit = await this.fetchOnce(key, ref);
      } catch (error) {
        if (!(error instanceof GitFetchError)) throw error;
        if (!known) {
          this.failed.set(key, { error, at: this.now() });
          throw error;
        }
        // Serve the last revision rather than nothing, and wait a full interval before trying again.
        this.heads.set(key, { commit: known.commit, fetchedAt: this.now() });
        warning = `${error.message}; using the revision fetched earlier (${known.commit.slice(0, 12)})`;
      }
    }
    if (options.refresh) this.forgetParsed(key, null);
    const revision = `${key}@${commit}`;
    let skills = this.parsed.get(revision);
    if (!skills) {
      skills = await this.readSkills(ref, commit!);
      this.parsed.set(revision, skills);
    }
    return { ref, commit: commit!, skills, ...(warning ? { warning } : {}) };
  }

  private isOld(at: number): boolean {
    return this.now() - at >= this.options.refreshSeconds * 1000;
  }

  private fetchOnce(key: string, ref: RepoRef): Promise<string> {
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = this.options.git
        .fetchHead(ref)
        .then((commit) => {
          this.heads.set(key, { commit, fetchedAt: this.now() });
          this.failed.delete(key);
          this.forgetParsed(key, commit);
          return commit;
        })
        .finally(() => this.fetching.delete(key));
      this.fetching.set(key, pending);
    }
    return pending;
  }

  /** Drops the parsed skills of a repository's revisions other than `keep`. */
  private forgetParsed(key: string, keep: string | null): void {
    for (const revision of this.parsed.keys()) {
      if (revision.startsWith(`${key}@`) && revision !== `${key}@${keep}`) this.parsed.delete(revision);
    }
  }

  private async readSkills(ref: RepoRef, commit: string): Promise<RepoSkill[]> {
    const files = (await this.options.git.listFiles(ref, commit, SKILL_ROOTS)).filter((file) => isSkillPath(file.path));
    return mapWithLimit(files, 4, async (file): Promise<RepoSkill> => {
      const parsed =
        file.size > MAX_SKILL_BYTES
          ? {
              ok: false as const,
              name: skillFolder(file.path),
              error: `the file is larger than ${MAX_SKILL_BYTES / 1024} KiB`,
            }
          : parseSkill(file.path, await this.options.git.readFile(ref, commit, file.path));
      return parsed.ok
        ? {
            path: file.path,
            name: parsed.name,
            description: parsed.description,
            basePrompt: parsed.basePrompt,
            error: null,
          }
        : { path: file.path, name: parsed.name, description: '', basePrompt: '', error: parsed.error };
    });
  }
}
