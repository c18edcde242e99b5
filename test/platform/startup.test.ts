import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { generateApiKey, hashApiKey } from '../../src/platform/crypto.js';
import { openDatabase } from '../../src/platform/db/connect.js';
import { attemptServe, databaseEnv, onPostgres, spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase, freePort, spawnServer, type TestDatabase } from '../support/server.js';

const GENERATED_KEY = /hgr_[A-Za-z0-9]{40}/g;

describe('loadConfig', () => {
  test('defaults: port 8080 on 127.0.0.1, public URL from host and port, embedded database', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, path.resolve('.hangar'));
    assert.equal(config.bootstrapApiKey, undefined);
    assert.equal(config.metadataFiltering, true);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.bodyLimitBytes, 10 * 1024 * 1024);
    assert.equal(config.dbPoolSize, 10);
    assert.equal(config.vacuumIntervalSeconds, 3600);
  });

  test('the default public URL follows HOST and PORT, bracketing IPv6 hosts', () => {
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).publicUrl, 'http://0.0.0.0:9000');
    assert.equal(loadConfig({ HOST: '::1', PORT: '8081' }).publicUrl, 'http://[::1]:8081');
  });

  test('an explicit HANGAR_PUBLIC_URL wins and loses its trailing slashes', () => {
    const config = loadConfig({ HANGAR_PUBLIC_URL: 'https://hangar.example.com/base//', PORT: '9000' });
    assert.equal(config.publicUrl, 'https://hangar.example.com/base');
  });

  test('blank values count as unset and values are trimmed', () => {
    const config = loadConfig({ PORT: '  ', HOST: '', DATABASE_URL: ' ', HANGAR_LOG_LEVEL: ' debug ' });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.logLevel, 'debug');
  });

  test('settings are read and parsed', () => {
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: 'postgresql://u@db:5432/hangar',
      HANGAR_DATA_DIR: 'relative/dir',
      HANGAR_BOOTSTRAP_API_KEY: 'a-bootstrap-key-of-20',
      HANGAR_METADATA_FILTERING: 'OFF',
      HANGAR_BODY_LIMIT_BYTES: '2048',
      HANGAR_DB_POOL_SIZE: '3',
      HANGAR_VACUUM_INTERVAL_SECONDS: '60',
    });
    assert.equal(config.port, 0);
    assert.equal(config.databaseUrl, 'postgresql://u@db:5432/hangar');
    assert.equal(config.dataDir, path.resolve('relative/dir'));
    assert.equal(config.bootstrapApiKey, 'a-bootstrap-key-of-20');
    assert.equal(config.metadataFiltering, false);
    assert.equal(config.bodyLimitBytes, 2048);
    assert.equal(config.dbPoolSize, 3);
    assert.equal(config.vacuumIntervalSeconds, 60);
    for (const yes of ['true', '1', 'yes', 'ON'])
      assert.equal(loadConfig({ HANGAR_METADATA_FILTERING: yes }).metadataFiltering, true);
    for (const no of ['false', '0', 'no', 'Off'])
      assert.equal(loadConfig({ HANGAR_METADATA_FILTERING: no }).metadataFiltering, false);
  });

  test('a bad value is a ConfigError whose message names the variable', () => {
    const bad: Array<[string, string]> = [
      ['PORT', 'abc'],
      ['PORT', '-1'],
      ['PORT', '65536'],
      ['PORT', '80.5'],
      ['HANGAR_METADATA_FILTERING', 'maybe'],
      ['DATABASE_URL', 'mysql://x'],
      ['DATABASE_URL', 'not a url'],
      ['HANGAR_PUBLIC_URL', 'ftp://example.com'],
      ['HANGAR_LOG_LEVEL', 'loud'],
      ['HANGAR_BOOTSTRAP_API_KEY', 'short'],
      ['HANGAR_BOOTSTRAP_API_KEY', 'has spaces in the middle of it'],
      ['HANGAR_BODY_LIMIT_BYTES', '10'],
      ['HANGAR_DB_POOL_SIZE', '0'],
      ['HANGAR_VACUUM_INTERVAL_SECONDS', '1'],
    ];
    for (const [name, value] of bad) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(name),
        `${name}=${value} must be refused`,
      );
    }
  });

  test('blobs go to S3 when a bucket is named: path style for custom endpoints, keys in pairs', () => {
    assert.equal(loadConfig({}).s3, undefined);
    assert.deepEqual(loadConfig({ HANGAR_S3_BUCKET: 'b', HANGAR_S3_ENDPOINT: 'http://minio:9000' }).s3, {
      bucket: 'b',
      prefix: '',
      region: 'us-east-1',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
      credentials: undefined,
    });
    assert.equal(loadConfig({ HANGAR_S3_BUCKET: 'b' }).s3?.forcePathStyle, false);
    for (const env of [
      { HANGAR_S3_BUCKET: 'b', HANGAR_S3_ACCESS_KEY_ID: 'id' },
      { HANGAR_S3_BUCKET: 'b', HANGAR_S3_ENDPOINT: 'ftp://x' },
      { HANGAR_MAX_ARTIFACT_BYTES: '10' },
    ]) {
      assert.throws(() => loadConfig(env), ConfigError, JSON.stringify(env));
    }
  });
});

/** Teams, users and API keys as stored, to compare before and after a start. */
async function identities(database: TestDatabase) {
  const opened = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 1 });
  try {
    const { db } = opened;
    return {
      teams: await db.selectFrom('teams').select(['uid', 'name']).orderBy('uid').execute(),
      users: await db.selectFrom('users').select(['uid', 'is_admin']).orderBy('uid').execute(),
      members: await db
        .selectFrom('team_members')
        .select(['team_uid', 'user_uid', 'role'])
        .orderBy('user_uid')
        .execute(),
      keys: await db
        .selectFrom('api_keys')
        .select(['uid', 'key_hash', 'user_uid', 'revoked_at'])
        .orderBy('uid')
        .execute(),
    };
  } finally {
    await opened.close();
  }
}

async function listRuns(url: string, apiKey: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/agent/runs`, { headers: { authorization: `Bearer ${apiKey}` } });
  await response.arrayBuffer();
  return response.status;
}

describe('hangar serve', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-startup-'));
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  test('a bad setting stops the start with exit code 2 and a message on stderr naming the variable', async () => {
    const cases: Array<[string, string]> = [
      ['PORT', 'abc'],
      ['HANGAR_METADATA_FILTERING', 'maybe'],
      ['DATABASE_URL', 'mysql://x'],
      ['HANGAR_LOG_LEVEL', 'loud'],
    ];
    const attempts = await Promise.all(
      cases.map(async ([name, value]) => {
        const dataDir = path.join(scratch, `bad-${name}`);
        return { name, value, dataDir, attempt: await attemptServe({ HANGAR_DATA_DIR: dataDir, [name]: value }) };
      }),
    );
    for (const { name, value, dataDir, attempt } of attempts) {
      if (!attempt.exit) await stopChild(attempt.child, 'SIGKILL');
      assert.ok(attempt.exit, `${name}=${value}: the server started anyway`);
      assert.equal(attempt.exit.code, 2, `${name}=${value}: exit code`);
      assert.match(attempt.stderr, /configuration error/, `${name}=${value}: stderr was ${attempt.stderr}`);
      assert.ok(
        attempt.stderr.includes(name),
        `${name}=${value}: stderr does not name the variable: ${attempt.stderr}`,
      );
      assert.ok(
        !/\n\s+at /.test(attempt.stderr),
        `${name}=${value}: a stack trace instead of a message: ${attempt.stderr}`,
      );
      assert.equal(fs.existsSync(dataDir), false, 'a refused configuration touches nothing on disk');
    }
  });

  test('an unreachable PostgreSQL stops the start with a non-zero exit and the reason', async () => {
    const port = await freePort();
    const attempt = await attemptServe({
      HANGAR_DATA_DIR: path.join(scratch, 'unreachable'),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`,
    });
    if (!attempt.exit) await stopChild(attempt.child, 'SIGKILL');
    assert.ok(attempt.exit, 'the server started without its database');
    assert.notEqual(attempt.exit.code, 0);
    assert.match(attempt.stderr, /could not start/);
    assert.match(attempt.stderr, /ECONNREFUSED/);
  });

  test('the first start prints a generated key once and keeps it in a 0600 file; a second start changes nothing', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const env = { ...databaseEnv(database), HANGAR_BOOTSTRAP_API_KEY: '' };
    const keyFile = path.join(database.dataDir, 'bootstrap-api-key');

    const first = await spawnServer(env);
    let key: string;
    try {
      assert.equal(await listRuns(first.url, 'hgr_not-a-real-key-at-all'), 401);
      const printed = first.output().match(GENERATED_KEY) ?? [];
      assert.equal(printed.length, 1, `expected the key printed once, output was:\n${first.output()}`);
      key = printed[0]!;
      assert.equal(fs.readFileSync(keyFile, 'utf8'), `${key}\n`);
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      assert.equal(await listRuns(first.url, key), 200);
    } finally {
      assert.deepEqual(await stopChild(first.child), { code: 0, signal: null });
    }
    const afterFirst = await identities(database);
    assert.equal(afterFirst.teams.length, 1);
    assert.equal(afterFirst.teams[0]!.name, 'default');
    assert.equal(afterFirst.users.length, 1);
    assert.equal(afterFirst.users[0]!.is_admin, true);
    assert.deepEqual(afterFirst.members, [
      { team_uid: afterFirst.teams[0]!.uid, user_uid: afterFirst.users[0]!.uid, role: 'admin' },
    ]);
    assert.equal(afterFirst.keys.length, 1);
    assert.equal(afterFirst.keys[0]!.key_hash, hashApiKey(key), 'only the hash of the key is stored');
    const fileBefore = fs.statSync(keyFile);

    const second = await spawnServer(env);
    try {
      assert.equal(await listRuns(second.url, key), 200, 'the first key still works');
      assert.deepEqual(
        second.output().match(GENERATED_KEY),
        null,
        `the second start printed a key:\n${second.output()}`,
      );
    } finally {
      assert.deepEqual(await stopChild(second.child), { code: 0, signal: null });
    }
    assert.deepEqual(await identities(database), afterFirst);
    const fileAfter = fs.statSync(keyFile);
    assert.equal(fileAfter.mtimeMs, fileBefore.mtimeMs, 'the key file was rewritten');
    assert.equal(fs.readFileSync(keyFile, 'utf8'), `${key}\n`);
  });

  test('with HANGAR_BOOTSTRAP_API_KEY set, that key works, nothing is printed and no key file is written', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const server = await spawnKeyedServer(database);
    const key = server.apiKey;
    try {
      assert.equal(await listRuns(server.url, key), 200);
      assert.equal(await listRuns(server.url, generateApiKey()), 401);
      const created = await server.hangar.request('POST', '/agent/runs', { body: { prompt: 'bootstrap key in use' } });
      assert.equal(created.status, 200);
      assert.match(created.body.run_id, /\S/);
      assert.equal(server.output().includes(key), false, 'the configured key appeared in the output');
      assert.equal(server.output().match(GENERATED_KEY), null, 'a key was generated although one was configured');
      assert.equal(fs.existsSync(path.join(database.dataDir, 'bootstrap-api-key')), false);
    } finally {
      assert.deepEqual(await stopChild(server.child), { code: 0, signal: null });
    }
    const stored = await identities(database);
    assert.equal(stored.teams.length, 1);
    assert.deepEqual(
      stored.keys.map((row) => row.key_hash),
      [hashApiKey(key)],
    );
  });

  test('a second process on the same embedded data directory refuses to start while the first runs', async (t) => {
    if (onPostgres()) {
      t.skip('PGlite only: PostgreSQL replicas share one database by design');
      return;
    }
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const lockFile = path.join(database.dataDir, 'pglite.lock');
    const first = await spawnKeyedServer(database);
    const key = first.apiKey;
    try {
      assert.equal(fs.readFileSync(lockFile, 'utf8').trim(), String(first.child.pid));
      const second = await attemptServe(first.env);
      if (!second.exit) await stopChild(second.child, 'SIGKILL');
      assert.ok(second.exit, 'a second process started on a data directory in use');
      assert.notEqual(second.exit.code, 0);
      assert.match(second.stderr, new RegExp(`another Hangar process \\(pid ${first.child.pid}\\)`));
      assert.match(second.stderr, /pglite\.lock/);
      // The refused process leaves the first one and its lock alone.
      assert.equal(fs.readFileSync(lockFile, 'utf8').trim(), String(first.child.pid));
      assert.equal(await listRuns(first.url, key), 200);
    } finally {
      assert.deepEqual(await stopChild(first.child), { code: 0, signal: null });
    }
    assert.equal(fs.existsSync(lockFile), false, 'a graceful stop releases the lock file');
  });

  test('SIGTERM and SIGINT stop the server gracefully (exit 0) with committed data kept', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const first = await spawnKeyedServer(database);
    let runId: string;
    try {
      const created = await first.hangar.request('POST', '/agent/runs', {
        body: { prompt: 'kept across a graceful stop' },
      });
      assert.equal(created.status, 200);
      runId = created.body.run_id;
    } finally {
      assert.deepEqual(await stopChild(first.child, 'SIGTERM'), { code: 0, signal: null });
    }
    await assert.rejects(fetch(`${first.url}/healthz`), 'the port is closed after the stop');

    // Started again with the key of the first start.
    const second = await spawnKeyedServer(database, first.env);
    try {
      const fetched = await second.hangar.request('GET', `/agent/runs/${runId}`);
      assert.equal(fetched.status, 200);
      assert.equal(fetched.body.prompt, 'kept across a graceful stop');
    } finally {
      assert.deepEqual(await stopChild(second.child, 'SIGINT'), { code: 0, signal: null });
    }
    if (!onPostgres()) assert.equal(fs.existsSync(path.join(database.dataDir, 'pglite.lock')), false);
  });
});
