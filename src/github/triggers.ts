import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

/** The kinds of GitHub event that may start a run; a team's `github` automation triggers name them. */
export const GITHUB_EVENT_KINDS = ['mention', 'label', 'review'] as const;
export type GitHubEventKind = (typeof GITHUB_EVENT_KINDS)[number];

/** An issue or pull request thread a delivery points at, with what in it asked for a run. */
export interface IssueThread {
  kind: GitHubEventKind;
  owner: string;
  repo: string;
  /** The issue's or the pull request's number (a pull request is an issue: Hangar replies in its conversation). */
  number: number;
  url: string;
  title: string;
  body: string;
  pullRequest: boolean;
  /** The comment that mentioned the handle, or the review that asked for changes; null for a label. */
  comment: { author: string; body: string; url: string } | null;
  /** The label the issue got (label events). */
  label: string | null;
  /**
   * Who asked, by GitHub login: the comment's or the review's author, or the sender who labelled. Their write access
   * to the repository (or the link's allow-list) decides whether anything starts; '' when the delivery names nobody.
   */
  sender: string;
  installationId: number;
  /**
   * A review's pull request branch when it is in the repository itself (not a fork's): the run checks it out and
   * Hangar pushes to it, so the pull request gets the commits. null otherwise (a fork's branch is not the team's to
   * push: the run works from the default branch and Hangar opens a pull request of its own).
   */
  headBranch: string | null;
}

/** The parts of an App delivery the triggers read; every field is checked before use (the sender is GitHub, the text is anyone's). */
interface Delivery {
  action?: unknown;
  comment?: {
    body?: unknown;
    html_url?: unknown;
    performed_via_github_app?: unknown;
    user?: { login?: unknown; type?: unknown };
  };
  review?: { state?: unknown; body?: unknown; html_url?: unknown; user?: { login?: unknown; type?: unknown } };
  issue?: { number?: unknown; html_url?: unknown; title?: unknown; body?: unknown; pull_request?: unknown };
  pull_request?: {
    number?: unknown;
    html_url?: unknown;
    title?: unknown;
    body?: unknown;
    head?: { ref?: unknown; repo?: { full_name?: unknown } | null };
  };
  label?: { name?: unknown };
  sender?: { login?: unknown; type?: unknown };
  repository?: { name?: unknown; owner?: { login?: unknown } };
  installation?: { id?: unknown };
}

/** `@handle` as a whole mention: not part of a longer login, not an e-mail address. */
export function mentions(text: string, handle: string): boolean {
  const escaped = handle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_.@-])@${escaped}(?![A-Za-z0-9_-])`, 'i').test(text);
}

/**
 * What a delivery is among the events that may start a run, with its thread; undefined for anything else:
 * - `mention`: an issue or pull request comment (`issue_comment`, created) that mentions the handle;
 * - `label`: an issue that got a label (`issues`, labeled), whichever label (the built-in trigger and the
 *   automations' filters say which);
 * - `review`: a pull request review submitted with changes requested (`pull_request_review`, submitted,
 *   `changes_requested`). The review's line comments (`pull_request_review_comment`) arrive as deliveries of their
 *   own, one per comment, for the same review: they start nothing, the review's submission is the one event.
 */
export function classify(event: string, delivery: unknown, handle: string): IssueThread | undefined {
  const payload = delivery as Delivery | null | undefined;
  if (typeof payload !== 'object' || payload === null) return undefined;
  if (event === 'issue_comment' && payload.action === 'created') {
    const comment = payload.comment;
    if (typeof comment?.body !== 'string') return undefined;
    // The App's own replies never start runs (they may quote the handle).
    if (comment.performed_via_github_app || comment.user?.type === 'Bot') return undefined;
    if (!mentions(comment.body, handle)) return undefined;
    const author = {
      author: String(comment.user?.login ?? ''),
      body: comment.body,
      url: String(comment.html_url ?? ''),
    };
    return thread(payload, payload.issue, 'mention', author);
  }
  if (event === 'issues' && payload.action === 'labeled') {
    const found = thread(payload, payload.issue, 'label', null);
    return found && { ...found, label: String(payload.label?.name ?? '') };
  }
  if (event === 'pull_request_review' && payload.action === 'submitted') {
    const review = payload.review;
    if (String(review?.state ?? '').toLowerCase() !== 'changes_requested') return undefined;
    if (review?.user?.type === 'Bot') return undefined;
    const said = {
      author: String(review?.user?.login ?? ''),
      body: String(review?.body ?? ''),
      url: String(review?.html_url ?? ''),
    };
    return thread(payload, payload.pull_request, 'review', said);
  }
  return undefined;
}

/** Whether the built-in triggers (a team without `github` automations) start a run for the thread. */
export function startsByDefault(thread: IssueThread, label: string | undefined): boolean {
  if (thread.kind !== 'label') return true;
  return label !== undefined && thread.label?.toLowerCase() === label.toLowerCase();
}

/** The issue (or pull request), repository and installation every trigger's delivery names; undefined when one is missing. */
function thread(
  payload: Delivery,
  issue: Delivery['issue'] | Delivery['pull_request'],
  kind: GitHubEventKind,
  comment: IssueThread['comment'],
): IssueThread | undefined {
  const { repository } = payload;
  const installationId = payload.installation?.id;
  if (typeof issue?.html_url !== 'string' || typeof installationId !== 'number') return undefined;
  if (typeof repository?.name !== 'string' || typeof repository?.owner?.login !== 'string') return undefined;
  return {
    kind,
    owner: repository.owner.login,
    repo: repository.name,
    number: Number(issue.number),
    url: issue.html_url,
    title: String(issue.title ?? ''),
    body: String(issue.body ?? ''),
    pullRequest: kind === 'review' || Boolean((issue as Delivery['issue'])?.pull_request),
    comment,
    label: null,
    sender: comment?.author || (typeof payload.sender?.login === 'string' ? payload.sender.login : ''),
    installationId,
    headBranch: kind === 'review' ? sameRepositoryHead(payload) : null,
  };
}

/** The pull request's head branch when its repository is the delivery's own; null for a fork's. */
function sameRepositoryHead(payload: Delivery): string | null {
  const head = payload.pull_request?.head;
  const repository = `${payload.repository?.owner?.login}/${payload.repository?.name}`.toLowerCase();
  if (typeof head?.ref !== 'string' || typeof head.repo?.full_name !== 'string') return null;
  return head.repo.full_name.toLowerCase() === repository ? head.ref : null;
}

/** What a run about the thread is configured with: a same-repository pull request's branch to work on. */
export function threadRunConfig(thread: IssueThread): { github?: { branch: string } } {
  return thread.headBranch ? { github: { branch: thread.headBranch } } : {};
}

/** The teams that linked the installation. */
export async function teamsOfInstallation(db: Kysely<DB>, installationId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('github_links')
    .select('team_uid')
    .where('installation_id', '=', String(installationId) as never)
    .execute();
  return rows.map((row) => row.team_uid);
}

/** `owner/repo#number (url)`: which thread a run is about. */
export function threadName(thread: IssueThread): string {
  return `${thread.owner}/${thread.repo}#${thread.number} (${thread.url})`;
}

/** What the run is asked to do; the thread itself goes in the workspace file the envelope names. */
export function threadInstructions(thread: IssueThread): string {
  const where = threadName(thread);
  const opening = {
    mention: `You were mentioned on GitHub in ${where}.`,
    label: `The GitHub issue ${where} was labelled for you.`,
    review: `A review of the GitHub pull request ${where} requested changes.`,
  }[thread.kind];
  const what = {
    mention: 'Read the thread (the issue, and the comment that mentioned you) and do what it asks in the repository.',
    label: 'Read the issue and do what it asks in the repository.',
    review: 'Read the pull request and the review (its body and the review URL) and make the changes it asks for.',
  }[thread.kind];
  const lines = [opening, what];
  // A same-repository pull request's branch is checked out and Hangar pushes to it. A fork's is not: the run clones
  // the default branch and Hangar opens its changes as a pull request of their own. The branch's name is the pull
  // request author's text: it stays in the payload file (and the run's config), out of the instructions.
  if (thread.kind === 'review')
    lines.push(
      thread.headBranch
        ? "The pull request's branch is checked out in the workspace; Hangar pushes your commits to it, so the pull request gets them."
        : 'To build on the pull request, fetch and check out its branch (pull_request.head.ref in the payload) first.',
    );
  return lines.join('\n');
}
