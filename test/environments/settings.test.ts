import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

test('HANGAR_GIT_BASE_URL defaults to GitHub, drops trailing slashes and must be a git URL', () => {
  assert.equal(loadConfig({}).gitBaseUrl, 'https://github.com');
  assert.equal(
    loadConfig({ HANGAR_GIT_BASE_URL: 'https://git.example.com/mirror/' }).gitBaseUrl,
    'https://git.example.com/mirror',
  );
  assert.equal(loadConfig({ HANGAR_GIT_BASE_URL: 'file:///srv/git' }).gitBaseUrl, 'file:///srv/git');
  for (const bad of ['github.com', 'ftp://example.com']) {
    assert.throws(
      () => loadConfig({ HANGAR_GIT_BASE_URL: bad }),
      (error: Error) => error instanceof ConfigError && /HANGAR_GIT_BASE_URL/.test(error.message),
    );
  }
});

test('HANGAR_GIT_REFRESH_SECONDS defaults to 300; 0 fetches on every request', () => {
  assert.equal(loadConfig({}).gitRefreshSeconds, 300);
  assert.equal(loadConfig({ HANGAR_GIT_REFRESH_SECONDS: '0' }).gitRefreshSeconds, 0);
  assert.throws(() => loadConfig({ HANGAR_GIT_REFRESH_SECONDS: '-1' }), ConfigError);
});
