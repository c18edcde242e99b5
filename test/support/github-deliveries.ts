import { sign } from '@octokit/webhooks-methods';
import type { TestServer } from './server.js';

/**
 * Deliveries of the GitHub App's webhook as GitHub sends them (the fields Hangar reads, with GitHub's names), for
 * repository acme/api of installation 7, signed with `@octokit/webhooks-methods`.
 */

export const APP_WEBHOOK_SECRET = 'app-webhook-secret-0123456789';

export const issueUrl = (number: number) => `https://github.com/acme/api/issues/${number}`;
export const pullUrl = (number: number) => `https://github.com/acme/api/pull/${number}`;

const where = { repository: { name: 'api', owner: { login: 'acme' } }, installation: { id: 7 } };

/** The commenter of the deliveries unless a test names another (the GitHub stack gives them write access). */
export const COMMENTER = 'octocat';
export const REVIEWER = 'reviewer';

/**
 * `issue_comment` (created) on issue `number`; `at`: when the comment was made (now by default); `by`: the
 * commenter's login and the author_association GitHub wrote (`COLLABORATOR` by default; what it claims is not
 * what Hangar checks).
 */
export function commentDelivery(
  number: number,
  comment: string,
  at = new Date(),
  by: { login?: string; association?: string } = {},
): string {
  const login = by.login ?? COMMENTER;
  return JSON.stringify({
    action: 'created',
    issue: { number, html_url: issueUrl(number), title: `Issue ${number}`, body: 'The README is too short.' },
    comment: {
      id: 1000 + number,
      body: comment,
      user: { login, type: 'User' },
      author_association: by.association ?? 'COLLABORATOR',
      html_url: `${issueUrl(number)}#issuecomment-${1000 + number}`,
      created_at: at.toISOString(),
    },
    sender: { login, type: 'User' },
    ...where,
  });
}

/** `issues` (labeled): issue `number` got `label` from `sender`. */
export function labelDelivery(number: number, label: string, sender = COMMENTER): string {
  return JSON.stringify({
    action: 'labeled',
    label: { name: label },
    sender: { login: sender, type: 'User' },
    issue: {
      number,
      html_url: issueUrl(number),
      title: `Issue ${number}`,
      body: 'Typo in the README.',
      updated_at: new Date().toISOString(),
    },
    ...where,
  });
}

/** `pull_request_review` (submitted) on pull request `number`, with the review's state and body. */
export function reviewDelivery(
  number: number,
  // head: the pull request's branch (feature-<number>); headRepo: the repository holding it (owner/repo), none said
  // by default (as for a fork GitHub no longer has).
  review: { state: string; body: string; base?: string; login?: string; head?: string; headRepo?: string },
): string {
  const login = review.login ?? REVIEWER;
  return JSON.stringify({
    action: 'submitted',
    sender: { login, type: 'User' },
    review: {
      id: 5000 + number,
      state: review.state,
      body: review.body,
      user: { login, type: 'User' },
      author_association: 'COLLABORATOR',
      html_url: `${pullUrl(number)}#pullrequestreview-${5000 + number}`,
      submitted_at: new Date().toISOString(),
    },
    pull_request: {
      number,
      html_url: pullUrl(number),
      title: `Pull request ${number}`,
      body: 'Adds a line.',
      head: {
        ref: review.head ?? `feature-${number}`,
        ...(review.headRepo ? { repo: { full_name: review.headRepo } } : {}),
      },
      base: { ref: review.base ?? 'main' },
      updated_at: new Date().toISOString(),
    },
    ...where,
  });
}

/** `pull_request_review_comment` (created): one line comment of a review on pull request `number`. */
export function reviewCommentDelivery(number: number, body: string): string {
  return JSON.stringify({
    action: 'created',
    comment: {
      id: 7000 + number,
      body,
      user: { login: 'reviewer', type: 'User' },
      html_url: `${pullUrl(number)}#discussion_r${7000 + number}`,
      created_at: new Date().toISOString(),
    },
    pull_request: { number, html_url: pullUrl(number), title: `Pull request ${number}`, body: 'Adds a line.' },
    ...where,
  });
}

let nextDelivery = 1;

/** POSTs a delivery to the App's webhook; `signature` replaces the right one, `id` GitHub's delivery ID. */
export async function deliver(
  hangar: TestServer,
  body: string,
  options: { event?: string; signature?: string; id?: string } = {},
) {
  return hangar.request('POST', '/webhooks/github-app', {
    apiKey: null,
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': options.event ?? 'issue_comment',
      'x-github-delivery': options.id ?? `delivery-${nextDelivery++}`,
      'x-hub-signature-256': options.signature ?? (await sign(APP_WEBHOOK_SECRET, body)),
    },
  });
}
