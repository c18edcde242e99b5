import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../config.js';

const refused = (env: Record<string, string>, pattern: RegExp) =>
  assert.throws(
    () => loadConfig(env),
    (error: Error) => error instanceof ConfigError && pattern.test(error.message),
  );

test('the GitHub App: ID and key file together, a PEM key, a long webhook secret, an API URL defaulting to api.github.com', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-gh-config-'));
  try {
    const keyFile = path.join(directory, 'app.pem');
    fs.writeFileSync(keyFile, '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n');
    const none = loadConfig({});
    assert.equal(none.githubApp, undefined);
    assert.equal(none.githubApiUrl, 'https://api.github.com');
    const app = loadConfig({
      HANGAR_GITHUB_APP_ID: '42',
      HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: keyFile,
      HANGAR_GITHUB_WEBHOOK_SECRET: 'a-long-enough-secret',
      HANGAR_GITHUB_API_URL: 'https://ghe.example.com/api/v3/',
    });
    assert.equal(app.githubApp?.appId, 42);
    assert.match(app.githubApp!.privateKey, /BEGIN RSA PRIVATE KEY/);
    assert.equal(app.githubApp?.webhookSecret, 'a-long-enough-secret');
    assert.equal(app.githubApiUrl, 'https://ghe.example.com/api/v3');
    refused({ HANGAR_GITHUB_APP_ID: '42' }, /set together/);
    refused(
      { HANGAR_GITHUB_APP_ID: '42', HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: path.join(directory, 'missing') },
      /cannot be read/,
    );
    const notPem = path.join(directory, 'not.pem');
    fs.writeFileSync(notPem, 'hello');
    refused({ HANGAR_GITHUB_APP_ID: '42', HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: notPem }, /not a PEM private key/);
    refused(
      {
        HANGAR_GITHUB_APP_ID: '42',
        HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: keyFile,
        HANGAR_GITHUB_WEBHOOK_SECRET: 'short',
      },
      /at least 16/,
    );
    refused({ HANGAR_GITHUB_API_URL: 'ftp://x' }, /HANGAR_GITHUB_API_URL/);
    assert.equal(app.githubApp?.runsPerHourPerRepository, 30);
    assert.equal(app.githubApp?.runsPerHourPerUser, 10);
    const limited = loadConfig({
      HANGAR_GITHUB_APP_ID: '42',
      HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: keyFile,
      HANGAR_GITHUB_RUNS_PER_HOUR_PER_REPOSITORY: '5',
      HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER: '2',
    });
    assert.equal(limited.githubApp?.runsPerHourPerRepository, 5);
    assert.equal(limited.githubApp?.runsPerHourPerUser, 2);
    refused(
      {
        HANGAR_GITHUB_APP_ID: '42',
        HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: keyFile,
        HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER: '0',
      },
      /HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER must be between 1/,
    );
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
});

test('an App setting without HANGAR_GITHUB_APP_ID is a configuration error naming what is missing, not ignored', () => {
  for (const name of [
    'HANGAR_GITHUB_WEBHOOK_SECRET',
    'HANGAR_GITHUB_LABEL',
    'HANGAR_GITHUB_HANDLE',
    'HANGAR_GITHUB_RUNS_PER_HOUR_PER_REPOSITORY',
    'HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER',
  ])
    refused(
      { [name]: name === 'HANGAR_GITHUB_WEBHOOK_SECRET' ? 'a-long-enough-secret' : '3' },
      new RegExp(`^${name} is set but HANGAR_GITHUB_APP_ID is not`),
    );
  // Blank is unset, as for every other setting.
  assert.equal(loadConfig({ HANGAR_GITHUB_LABEL: ' ' }).githubApp, undefined);
});
