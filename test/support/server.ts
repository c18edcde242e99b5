import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/database.js';
import { insertApiKey, insertMembership, insertTeam, insertUser, type Role } from '../../src/identities/store.js';
import { generateApiKey, generateWorkerKey } from '../../src/platform/crypto.js';
import { type RunningServer, type Role as ServerRole, startServer } from '../../src/server.js';
import { insertWorkerKey } from '../../src/workers/keys/store.js';
import { listensOn } from './listening.js';
import { trackServerProcess } from './server-processes.js';
import { HANGAR_FROM_SOURCES } from './typescript.js';

interface Template {
  kind: 'pglite' | 'postgres';
  template: string;
}

function template(): Template {
  const raw = process.env.HANGAR_TEST_TEMPLATE;
  if (!raw) throw new Error('run the tests through `npm test` (scripts/run-tests.mjs builds the database template)');
  return JSON.parse(raw) as Template;
}

/**
 * A file listed in test/without-database.json runs on PGlite only (scripts/run-tests.mjs): one that opens a
 * database after all must leave the list, or its PostgreSQL side would never be tested.
 */
function refuseInFilesWithoutDatabase(): void {
  const file = path.relative(process.cwd(), process.argv[1] ?? '');
  const list = JSON.parse(fs.readFileSync('test/without-database.json', 'utf8')) as { files: string[] };
  if (list.files.includes(file))
    throw new Error(`${file} creates a test database: take it out of test/without-database.json`);
}

/** A fresh database for one test server: a copy of the migrated template, PGlite or PostgreSQL. */
export interface TestDatabase {
  dataDir: string;
  databaseUrl: string | undefined;
  drop(): Promise<void>;
}

/**
 * A data directory of its own: `<tmp>/hangar-test-XXXXXX`, or with `privateParent` (and for every test server when
 * HANGAR_TEST_PRIVATE_PARENT=1) `data` inside such a directory, left 0700 as `mktemp -d` makes it: the run user of
 * a root server cannot pass through it, as under root's home (issue 48; a 1777 /tmp parent hid that).
 */
function testDataDir(privateParent: boolean | undefined): { dataDir: string; remove: () => void } {
  const made = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-test-'));
  const remove = () => fs.rmSync(made, { recursive: true, force: true });
  if (!(privateParent ?? process.env.HANGAR_TEST_PRIVATE_PARENT === '1')) return { dataDir: made, remove };
  fs.chmodSync(made, 0o700);
  const dataDir = path.join(made, 'data');
  fs.mkdirSync(dataDir);
  return { dataDir, remove };
}

export async function createTestDatabase(options: { privateParent?: boolean } = {}): Promise<TestDatabase> {
  refuseInFilesWithoutDatabase();
  const { kind, template: source } = template();
  const { dataDir, remove } = testDataDir(options.privateParent);
  if (kind === 'pglite') {
    fs.cpSync(source, path.join(dataDir, 'pglite'), { recursive: true });
    return { dataDir, databaseUrl: undefined, drop: async () => remove() };
  }
  const adminUrl = process.env.TEST_DATABASE_URL!;
  // hangar_t_<runner pid>_<random>: the template step drops databases of runners that are gone.
  const name = `hangar_t_${source.replace('hangar_tpl_', '')}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${source}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
      remove();
    },
  };
}

export interface TestServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** url + /api/v1 */
  apiUrl: string;
  apiKey: string;
  /** A worker key of the default team for every worker ID (`*`): what `hangar worker` connects with. */
  workerKey: string;
  /** The server's data directory (workspaces live in its `workspaces/`, unless `workspaceDir` says otherwise). */
  dataDir: string;
  /** The workspace root the server uses: `<dataDir>/workspaces`, or Hangar's own when its run user cannot reach that. */
  workspaceDir: string;
  teamUid: string;
  userUid: string;
  db: Kysely<DB>;
  server: RunningServer;
  /** A new team with one user (role admin by default) and an API key for that user. */
  createTeamWithUser(options?: {
    teamName?: string;
    role?: Role;
  }): Promise<{ teamUid: string; userUid: string; apiKey: string; workerKey: string }>;
  /** Adds a new user to an existing team and returns their key. */
  addUser(teamUid: string, role?: Role): Promise<{ userUid: string; apiKey: string }>;
  request(
    method: string,
    urlPath: string,
    options?: { body?: unknown; apiKey?: string | null; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

/**
 * The sandbox the suite runs under, chosen like a server's: HANGAR_SANDBOX (bwrap when it works here, unset) and
 * HANGAR_SANDBOX_READ_ONLY_PATHS (scripts/run-tests.mjs sets the checkout, whose harnesses and MCP servers runs
 * start: a bwrap sandbox's /tmp is empty, and the checkout may live there).
 */
function sandboxSelection(): Record<string, string> {
  const selected: Record<string, string> = {};
  for (const name of ['HANGAR_SANDBOX', 'HANGAR_SANDBOX_READ_ONLY_PATHS']) {
    const value = process.env[name];
    if (value) selected[name] = value;
  }
  return selected;
}

/**
 * Starts the real server in this process on a random port, on its own copy of the database (or on `database`,
 * to share one with other servers). `now` replaces the clock of cron evaluation.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: {
    role?: ServerRole;
    now?: () => Date;
    database?: TestDatabase;
    /** Receives every line the server logs (as written: redacted), at HANGAR_LOG_LEVEL of `env` (silent unless set). */
    logs?: (line: string) => void;
    /** The data directory inside a 0700 directory (testDataDir). */
    privateParent?: boolean;
  } = {},
): Promise<TestServer> {
  const database = options.database ?? (await createTestDatabase({ privateParent: options.privateParent }));
  const apiKey = env.HANGAR_BOOTSTRAP_API_KEY ?? generateApiKey();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    HANGAR_DATA_DIR: database.dataDir,
    HANGAR_BOOTSTRAP_API_KEY: apiKey,
    HANGAR_LOG_LEVEL: 'silent',
    // Setup snapshots off unless a test turns them on: a second run of an environment then sets up again, as the
    // suite's tests expect (test/environments/warm-start.test.ts tests the snapshots).
    HANGAR_SNAPSHOT_TTL: '0',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...sandboxSelection(),
    ...env,
  });
  const logs = options.logs;
  const server = await startServer(config, {
    logger: logs ? { capture: logs } : false,
    role: options.role,
    now: options.now,
  });
  const db = server.database.db;
  const team = await db.selectFrom('teams').select('uid').where('name', '=', 'default').executeTakeFirstOrThrow();
  const member = await db
    .selectFrom('team_members')
    .select('user_uid')
    .where('team_uid', '=', team.uid)
    .executeTakeFirstOrThrow();

  const addUser = async (teamUid: string, role: Role = 'admin') => {
    const userUid = await insertUser(db, { displayName: `User ${randomBytes(3).toString('hex')}` });
    await insertMembership(db, teamUid, userUid, role);
    const key = generateApiKey();
    await insertApiKey(db, { userUid }, key, 'test');
    return { userUid, apiKey: key };
  };
  const addWorkerKey = async (teamUid: string) => {
    const key = generateWorkerKey();
    await insertWorkerKey(db, { teamUid, key, name: 'test workers', workerId: '*', createdBy: null });
    return key;
  };
  const workerKey = await addWorkerKey(team.uid);

  const testServer: TestServer = {
    url: server.url,
    apiUrl: `${server.url}/api/v1`,
    apiKey,
    workerKey,
    dataDir: database.dataDir,
    workspaceDir: server.config.workspaceDir,
    teamUid: team.uid,
    userUid: member.user_uid,
    db,
    server,
    addUser,
    async createTeamWithUser(options = {}) {
      const teamUid = await insertTeam(db, options.teamName ?? `team-${randomBytes(4).toString('hex')}`);
      return { teamUid, ...(await addUser(teamUid, options.role)), workerKey: await addWorkerKey(teamUid) };
    },
    async request(method, urlPath, options = {}) {
      const key = options.apiKey === undefined ? apiKey : options.apiKey;
      const response = await fetch(
        `${server.url}${urlPath.startsWith('/api/') || !urlPath.startsWith('/agent') ? urlPath : `/api/v1${urlPath}`}`,
        {
          method,
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...options.headers,
          },
          body:
            options.body === undefined
              ? undefined
              : typeof options.body === 'string'
                ? options.body
                : JSON.stringify(options.body),
        },
      );
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // Not JSON: keep the text.
      }
      return { status: response.status, headers: response.headers, body };
    },
    async stop() {
      await server.stop();
      if (options.database) return;
      await database.drop();
      // Hangar's own directory for this data directory's workspaces and snapshots (placeWorkspaces).
      if (server.config.workspacesRelocated)
        fs.rmSync(path.dirname(server.config.snapshotDir), { recursive: true, force: true });
    },
  };
  return testServer;
}

/**
 * Runs `hangar serve` as a child process (for crash and start-up tests) and waits until it is ready: until it
 * answers on its port and holds that port itself (listensOn). Should another test's server have taken the port
 * picked for it first, it starts again on another.
 */
export async function spawnServer(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let output = '';
    const child = spawn(process.execPath, [...HANGAR_FROM_SOURCES, 'serve', ...args], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), HANGAR_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackServerProcess(child);
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    // Streams may still hold output when the child has exited; 'close' means they are drained.
    const closed = new Promise((resolve) => child.once('close', resolve));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      try {
        if ((await fetch(`${url}/readyz`)).ok && listensOn(child.pid!, port))
          return { child, url, output: () => output };
      } catch {
        // Not listening yet.
      }
      // Another process's readiness: only asking tells.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready: ${output}`);
    }
    await closed;
    if (!(output.includes('EADDRINUSE') && attempt < 5))
      throw new Error(`server exited with ${child.exitCode ?? child.signalCode}: ${output}`);
  }
}

export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
