/** GitHub's naming rules for repositories, so a bad name is refused on save instead of failing a clone later. */

export interface RepoRef {
  owner: string;
  repo: string;
}

/** Letters, digits and single hyphens, at most 39, not starting or ending with a hyphen. */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** Letters, digits, `.`, `_` and `-`, at most 100; GitHub refuses `.` and `..`. */
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

export function ownerProblem(owner: string): string | null {
  return OWNER.test(owner)
    ? null
    : `"${owner}" is not a GitHub owner name (letters, digits and single hyphens, at most 39, not starting or ending with a hyphen)`;
}

export function repoProblem(repo: string): string | null {
  return REPO.test(repo) && repo !== '.' && repo !== '..'
    ? null
    : `"${repo}" is not a GitHub repository name (letters, digits, ".", "_" and "-", at most 100)`;
}

/** Parses `owner/repo`; null when it is not exactly that. */
export function parseRepoSpec(spec: string): RepoRef | null {
  const parts = spec.split('/');
  if (parts.length !== 2) return null;
  const [owner, repo] = parts as [string, string];
  return ownerProblem(owner) === null && repoProblem(repo) === null ? { owner, repo } : null;
}

/** GitHub names are case-insensitive: `Acme/API` and `acme/api` are one repository. */
export function repoKey(ref: RepoRef): string {
  return `${ref.owner}/${ref.repo}`.toLowerCase();
}
