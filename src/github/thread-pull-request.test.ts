import assert from 'node:assert/strict';
import { test } from 'node:test';
import { threadPullRequest } from './thread-pull-request.js';

const thread = { owner: 'Acme', repo: 'API' };
const pull = (repo: string, url: string, number = 3) => ({ repo, url, number });

test("a thread links the latest pull request Hangar published on the thread's own repository", () => {
  assert.equal(threadPullRequest(undefined, thread), undefined);
  assert.equal(
    threadPullRequest(
      [
        pull('acme/api', 'https://github.com/acme/api/pull/3'),
        pull('acme/api', 'https://github.com/acme/api/pull/4', 4),
      ],
      thread,
    ),
    'https://github.com/acme/api/pull/4',
  );
  // Another repository of the run's environment is not this thread's.
  assert.equal(threadPullRequest([pull('acme/web', 'https://github.com/acme/web/pull/3')], thread), undefined);
});

test('an address that is not that pull request of that repository is never linked', () => {
  for (const url of [
    'https://evil.example/other/repo/pull/3',
    'https://github.com/acme/api/pull/4',
    'https://github.com/acme/api/pull/3?x=1',
    'https://github.com/acme/api/pull/3#frag',
    'https://user:pass@github.com/acme/api/pull/3',
    'javascript:alert(1)//github.com/acme/api/pull/3',
    'https://github.com/acme/api/pull/3/files',
    'not a url',
  ])
    assert.equal(threadPullRequest([pull('acme/api', url)], thread), undefined, url);
});
