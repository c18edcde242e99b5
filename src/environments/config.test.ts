import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeConfig, storedConfig } from './config.js';

test('a config is normalised with its defaults', () => {
  assert.deepEqual(normalizeConfig({ name: ' Web ' }), {
    config: {
      name: 'Web',
      description: '',
      github_repos: [],
      setup_commands: [],
      failure_session_retention_minutes: null,
    },
  });
  const full = normalizeConfig({
    name: 'Web',
    description: null,
    docker_image: `ghcr.io/acme/web:1.2@sha256:${'ab'.repeat(32)}`,
    github_repos: [{ owner: 'acme', repo: 'web' }],
    setup_commands: ['npm ci'],
    failure_session_retention_minutes: 30,
  });
  assert.ok('config' in full && full.config.docker_image === `ghcr.io/acme/web:1.2@sha256:${'ab'.repeat(32)}`);
});

test('bad configs name the problem', () => {
  const problems: Array<[Parameters<typeof normalizeConfig>[0], RegExp]> = [
    [{ name: '   ' }, /name/],
    [{ name: 'x', docker_image: 'ubuntu latest' }, /docker_image/],
    // Images by ID (or a prefix of one), and Hangar's setup snapshots, are not an environment's to name (issue 47.2).
    [{ name: 'x', docker_image: '3' }, /docker_image "3" names an image by its ID/],
    [{ name: 'x', docker_image: `sha256:${'0'.repeat(64)}` }, /by its ID/],
    [{ name: 'x', docker_image: `localhost/hangar-snapshot:${'0'.repeat(24)}` }, /setup snapshots/],
    [
      {
        name: 'x',
        github_repos: [
          { owner: 'acme', repo: 'a' },
          { owner: 'bad owner', repo: 'b' },
        ],
      },
      /github_repos\[1\].*owner/,
    ],
    [{ name: 'x', github_repos: [{ owner: 'acme', repo: '..' }] }, /github_repos\[0\].*repository/],
    [
      {
        name: 'x',
        github_repos: [
          { owner: 'acme', repo: 'A' },
          { owner: 'ACME', repo: 'a' },
        ],
      },
      /twice/,
    ],
    [{ name: 'x', setup_commands: ['ok', ' '] }, /setup_commands\[1\]/],
  ];
  for (const [body, reason] of problems) {
    const result = normalizeConfig(body);
    assert.ok('problem' in result, JSON.stringify(body));
    assert.match(result.problem, reason);
  }
});

test('stored configs from older rows get defaults, and unusable repository names are dropped', () => {
  assert.deepEqual(
    storedConfig({
      name: 'env',
      github_repos: [
        { owner: '../..', repo: 'x' },
        { owner: 'acme', repo: 'api' },
      ],
    }),
    {
      name: 'env',
      description: '',
      github_repos: [{ owner: 'acme', repo: 'api' }],
      setup_commands: [],
      failure_session_retention_minutes: null,
    },
  );
});

test("the environment's GitHub pull-request default is kept when valid, dropped when a stored one is not", () => {
  const drafts = normalizeConfig({ name: 'Web', github: { pull_request: 'draft' } });
  assert.ok('config' in drafts);
  assert.deepEqual(drafts.config.github, { pull_request: 'draft' });
  const none = normalizeConfig({ name: 'Web', github: {} });
  assert.ok('config' in none && none.config.github === undefined);
  assert.deepEqual(storedConfig({ name: 'Web', github: { pull_request: 'off' } }).github, { pull_request: 'off' });
  assert.equal(storedConfig({ name: 'Web', github: { pull_request: 'closed' } }).github, undefined);
  assert.equal(storedConfig({ name: 'Web', github: 'draft' }).github, undefined);
});
