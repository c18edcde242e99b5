import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openValue, parseSecretKey } from '../../src/platform/crypto.js';
import { attemptServe, databaseEnv, stopChild } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

async function createSecret(hangar: TestServer, name: string, value: string): Promise<void> {
  const response = await hangar.request('POST', '/api/v1/secrets', { body: { name, value } });
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

async function rawRow(hangar: TestServer, name: string) {
  return hangar.db
    .selectFrom('secrets')
    .selectAll()
    .where('team_uid', '=', hangar.teamUid)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
}

describe('secrets at rest', () => {
  test('the stored row holds AES-256-GCM ciphertext, never the value, with a fresh IV per value', async (t) => {
    const key = randomBytes(32);
    const hangar = await startTestServer({ HANGAR_SECRET_KEY: key.toString('base64') }, { role: 'api' });
    t.after(() => hangar.stop());
    const value = `sk-live-${randomBytes(24).toString('hex')}`;
    await createSecret(hangar, 'API_TOKEN', value);
    await createSecret(hangar, 'SAME_VALUE', value);

    const row = await rawRow(hangar, 'API_TOKEN');
    const twin = await rawRow(hangar, 'SAME_VALUE');
    const stored = JSON.stringify(row) + Buffer.concat([row.iv, row.auth_tag, row.ciphertext]).toString('latin1');
    for (const encoding of ['utf8', 'hex', 'base64'] as const) {
      assert.equal(stored.includes(Buffer.from(value).toString(encoding)), false, `the value is stored in ${encoding}`);
    }
    assert.equal(row.iv.length, 12);
    assert.equal(row.auth_tag.length, 16);
    assert.equal(row.ciphertext.length, Buffer.byteLength(value), 'GCM ciphertext is as long as the plaintext');
    assert.notDeepEqual(Buffer.from(row.iv), Buffer.from(twin.iv));
    assert.notDeepEqual(Buffer.from(row.ciphertext), Buffer.from(twin.ciphertext));

    const sealed = {
      iv: Buffer.from(row.iv),
      authTag: Buffer.from(row.auth_tag),
      ciphertext: Buffer.from(row.ciphertext),
    };
    const context = `hangar/secrets/${hangar.teamUid}/API_TOKEN`;
    assert.equal(openValue(key, sealed, context), value, 'the configured key decrypts it');
    assert.throws(() => openValue(randomBytes(32), sealed, context), 'a wrong key cannot decrypt it');

    // A row copied under another name (or team) does not decrypt: team and name are authenticated.
    await hangar.db
      .updateTable('secrets')
      .set({ iv: row.iv, auth_tag: row.auth_tag, ciphertext: row.ciphertext })
      .where('team_uid', '=', hangar.teamUid)
      .where('name', '=', 'SAME_VALUE')
      .execute();
    await createSecret(hangar, 'MOVED', 'placeholder');
    await hangar.db
      .updateTable('secrets')
      .set({ iv: row.iv, auth_tag: row.auth_tag, ciphertext: row.ciphertext })
      .where('team_uid', '=', hangar.teamUid)
      .where('name', '=', 'MOVED')
      .execute();
    await assert.rejects(hangar.server.services.secrets.readSecretValue(hangar.teamUid, 'MOVED'));
    assert.equal(await hangar.server.services.secrets.readSecretValue(hangar.teamUid, 'API_TOKEN'), value);
  });

  test('without HANGAR_SECRET_KEY a key is generated into <data dir>/secret-key (0600) and reused on restart', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const keyFile = path.join(database.dataDir, 'secret-key');
    assert.equal(fs.existsSync(keyFile), false);

    const first = await startTestServer({}, { role: 'api', database });
    let stat: fs.Stats;
    let content: string;
    try {
      stat = fs.statSync(keyFile);
      assert.equal(stat.mode & 0o777, 0o600);
      content = fs.readFileSync(keyFile, 'utf8');
      assert.equal(parseSecretKey(content)?.length, 32);
      await createSecret(first, 'SURVIVES_RESTART', 'kept across restarts');
    } finally {
      await first.stop();
    }

    const second = await startTestServer({}, { role: 'api', database });
    try {
      assert.equal(
        await second.server.services.secrets.readSecretValue(second.teamUid, 'SURVIVES_RESTART'),
        'kept across restarts',
      );
      assert.equal(fs.readFileSync(keyFile, 'utf8'), content);
      assert.equal(fs.statSync(keyFile).mtimeMs, stat.mtimeMs, 'the key file was rewritten');
      assert.deepEqual(
        fs.readdirSync(database.dataDir).filter((file) => file.includes('secret-key')),
        ['secret-key'],
        'no temporary file left',
      );
    } finally {
      await second.stop();
    }
  });

  test('with HANGAR_SECRET_KEY set no key file is written, and a start with another key is refused', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const key = randomBytes(32).toString('hex');
    const first = await startTestServer({ HANGAR_SECRET_KEY: key }, { role: 'api', database });
    try {
      await createSecret(first, 'PINNED', 'needs the same key');
      assert.equal(fs.existsSync(path.join(database.dataDir, 'secret-key')), false);
    } finally {
      await first.stop();
    }

    // A replica (or a restart) with a different key would write secrets the others cannot read: it stops instead.
    const otherKey = randomBytes(32).toString('base64');
    const attempt = await attemptServe({ ...databaseEnv(database), HANGAR_SECRET_KEY: otherKey });
    if (!attempt.exit) await stopChild(attempt.child, 'SIGKILL');
    assert.ok(attempt.exit, 'a server with another key started');
    assert.notEqual(attempt.exit.code, 0);
    assert.match(attempt.stderr, /HANGAR_SECRET_KEY/);
    assert.equal(attempt.stderr.includes(otherKey) || attempt.stderr.includes(key), false, 'a key was echoed');

    const again = await startTestServer({ HANGAR_SECRET_KEY: key }, { role: 'api', database });
    try {
      assert.equal(await again.server.services.secrets.readSecretValue(again.teamUid, 'PINNED'), 'needs the same key');
    } finally {
      await again.stop();
    }
  });
});

describe('HANGAR_SECRET_KEY', () => {
  test('is read as 64 hex characters or base64 of 32 bytes; unset means the key file', () => {
    const key = randomBytes(32);
    assert.equal(loadConfig({}).secretKey, undefined);
    assert.equal(loadConfig({ HANGAR_SECRET_KEY: '  ' }).secretKey, undefined);
    assert.deepEqual(loadConfig({ HANGAR_SECRET_KEY: key.toString('hex') }).secretKey, key);
    assert.deepEqual(loadConfig({ HANGAR_SECRET_KEY: key.toString('base64') }).secretKey, key);
    assert.deepEqual(loadConfig({ HANGAR_SECRET_KEY: key.toString('base64url') }).secretKey, key);
  });

  test('a malformed key is a ConfigError naming the variable but not the value', () => {
    for (const bad of [
      'too-short',
      randomBytes(16).toString('hex'),
      randomBytes(24).toString('base64'),
      `${randomBytes(32).toString('hex')}ab`,
    ]) {
      assert.throws(
        () => loadConfig({ HANGAR_SECRET_KEY: bad }),
        (error: unknown) =>
          error instanceof ConfigError && error.message.includes('HANGAR_SECRET_KEY') && !error.message.includes(bad),
        bad,
      );
    }
  });
});
