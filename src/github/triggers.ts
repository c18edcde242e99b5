import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

/** An issue thread a delivery points at, with the comment (if any) that asked for a run. */
export interface IssueThread {
  owner: string;
  repo: string;
  number: number;
  url: string;
  title: string;
  body: string;
  comment: { author: string; body: string; url: string } | null;
  installationId: number;
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
  issue?: { number?: unknown; html_url?: unknown; title?: unknown; body?: unknown };
  label?: { name?: unknown };
  repository?: { name?: unknown; owner?: { login?: unknown } };
  installation?: { id?: unknown };
}

/** `@handle` as a whole mention: not part of a longer login, not an e-mail address. */
export function mentions(text: string, handle: string): boolean {
  const escaped = handle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_.@-])@${escaped}(?![A-Za-z0-9_-])`, 'i').test(text);
}

/** The thread of an `issue_comment` (created) that mentions the handle; undefined for anything else. */
export function mentioningComment(event: string, delivery: unknown, handle: string): IssueThread | undefined {
  const payload = delivery as Delivery | null | undefined;
  if (event !== 'issue_comment' || payload?.action !== 'created') return undefined;
  const comment = payload.comment;
  if (typeof comment?.body !== 'string') return undefined;
  // The App's own replies never start runs (they may quote the handle).
  if (comment.performed_via_github_app || comment.user?.type === 'Bot') return undefined;
  if (!mentions(comment.body, handle)) return undefined;
  return issueThread(payload, {
    author: String(comment.user?.login ?? ''),
    body: comment.body,
    url: String(comment.html_url ?? ''),
  });
}

/** The thread of an issue that just got the configured label (`issues`, labeled); undefined for anything else. */
export function labelledIssue(event: string, delivery: unknown, label: string | undefined): IssueThread | undefined {
  const payload = delivery as Delivery | null | undefined;
  if (label === undefined || event !== 'issues' || payload?.action !== 'labeled') return undefined;
  if (String(payload.label?.name ?? '').toLowerCase() !== label.toLowerCase()) return undefined;
  return issueThread(payload, null);
}

/** The issue, repository and installation every trigger's delivery names; undefined when one is missing. */
function issueThread(payload: Delivery, comment: IssueThread['comment']): IssueThread | undefined {
  const { issue, repository } = payload;
  const installationId = payload.installation?.id;
  if (typeof issue?.html_url !== 'string' || typeof installationId !== 'number') return undefined;
  if (typeof repository?.name !== 'string' || typeof repository?.owner?.login !== 'string') return undefined;
  return {
    owner: repository.owner.login,
    repo: repository.name,
    number: Number(issue.number),
    url: issue.html_url,
    title: String(issue.title ?? ''),
    body: String(issue.body ?? ''),
    comment,
    installationId,
  };
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

/** What the run is asked to do; the thread itself goes in the workspace file the envelope names. */
export function threadInstructions(thread: IssueThread): string {
  return [
    thread.comment
      ? `You were mentioned on GitHub in ${thread.owner}/${thread.repo}#${thread.number} (${thread.url}).`
      : `The GitHub issue ${thread.owner}/${thread.repo}#${thread.number} (${thread.url}) was labelled for you.`,
    'Read the thread (the issue, and the comment that mentioned you if any) and do what it asks in the repository.',
  ].join('\n');
}
