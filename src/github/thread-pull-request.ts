import type { PublishedPullRequest } from '../runs/index.js';

/**
 * The pull request of the thread's repository that Hangar itself published for the run (the latest), never an
 * address the run reported: a harness can report any PULL_REQUEST artifact (https://evil.example/...), and Hangar's
 * comment would lend it its name. GitHub gave the address; it must still read `<host>/<owner>/<repo>/pull/<n>` of
 * that repository and number.
 */
export function threadPullRequest(
  published: readonly PublishedPullRequest[] | undefined,
  thread: { owner: string; repo: string },
): string | undefined {
  const name = `${thread.owner}/${thread.repo}`.toLowerCase();
  const ours = (published ?? []).filter((pull) => pull.repo.toLowerCase() === name && isPullOf(pull, name));
  return ours.at(-1)?.url;
}

function isPullOf(pull: PublishedPullRequest, name: string): boolean {
  let url: URL;
  try {
    url = new URL(pull.url);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return false;
  const match = /^\/([^/]+)\/([^/]+)\/pull\/(\d+)$/.exec(url.pathname);
  return match !== null && `${match[1]}/${match[2]}`.toLowerCase() === name && Number(match[3]) === pull.number;
}
