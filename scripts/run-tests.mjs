// Runs the whole suite with Node's test runner: unit tests beside the code (src/**/*.test.ts) and integration
// tests (test/**/*.test.ts). The database template is built once here and copied by every test file.
// With TEST_DATABASE_URL set, every test file gets its own PostgreSQL database; otherwise its own PGlite.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

function findTests(directory) {
  if (!fs.existsSync(directory)) return [];
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return findTests(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const only = process.argv.slice(2);
// On PostgreSQL, the whole suite but the files that open no database (test/without-database.json): the PGlite pass
// runs those, and here they would test the same thing again (their ~2 minutes were CI's longest repeat). Files
// named on the command line always run.
const withoutDatabase = new Set(JSON.parse(fs.readFileSync('test/without-database.json', 'utf8')).files);
const missing = [...withoutDatabase].filter((file) => !fs.existsSync(file));
if (missing.length > 0) {
  process.stderr.write(`test/without-database.json names files that do not exist: ${missing.join(', ')}\n`);
  process.exit(1);
}
const skipped = only.length === 0 && process.env.TEST_DATABASE_URL ? withoutDatabase : new Set();
const files =
  only.length > 0 ? only : [...findTests('src'), ...findTests('test')].sort().filter((file) => !skipped.has(file));
// TypeScript runs through scripts/ts-loader.mjs: in-thread hooks where Node has them, tsx elsewhere.
const typescript = ['--import', path.resolve('scripts/ts-loader.mjs')];
const template = JSON.parse(
  execFileSync(process.execPath, [...typescript, 'test/support/template.ts'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
);
process.stdout.write(
  `hangar tests: ${files.length} files on ${template.kind === 'postgres' ? `PostgreSQL (${process.env.TEST_DATABASE_URL})` : 'PGlite'}` +
    (skipped.size > 0
      ? ` (the ${skipped.size} that open no database run on PGlite only: test/without-database.json)`
      : '') +
    '\n',
);

// No --test-force-exit: under Node 24 it can end a file's process before its reporter has flushed, so a file's
// later tests silently go missing from the report (measured: 38 of 47 tests reported, none failed). Instead, a file
// that leaves a handle open (a server a failed test could not stop) is caught by a watchdog: when the runner prints
// nothing for HANGAR_TEST_SILENCE_MINUTES, it is stopped and the run fails, naming the cause.
const silenceMinutes = Number(process.env.HANGAR_TEST_SILENCE_MINUTES ?? 10);
const runner = spawn(
  process.execPath,
  [
    ...typescript,
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-file-times.mjs',
    '--test-reporter-destination=stdout',
    ...files,
  ],
  {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: {
      ...process.env,
      HANGAR_TEST_TEMPLATE: JSON.stringify(template),
      // The suite's harnesses and MCP servers are files of this checkout: a bwrap sandbox must see it even when it
      // lives under /tmp, which the sandbox replaces with an empty one. HANGAR_SANDBOX picks the sandbox as usual.
      HANGAR_SANDBOX_READ_ONLY_PATHS: process.env.HANGAR_SANDBOX_READ_ONLY_PATHS ?? process.cwd(),
    },
  },
);
let lastOutput = Date.now();
let silenced = false;
runner.stdout.on('data', (chunk) => {
  lastOutput = Date.now();
  process.stdout.write(chunk);
});
runner.stderr.on('data', (chunk) => {
  lastOutput = Date.now();
  process.stderr.write(chunk);
});
const watchdog = setInterval(() => {
  if (Date.now() - lastOutput < silenceMinutes * 60_000) return;
  silenced = true;
  process.stderr.write(
    `hangar tests: nothing printed for ${silenceMinutes} minutes: a test file has not exited (a server or timer left open?); stopping the run\n`,
  );
  process.kill(-runner.pid, 'SIGKILL');
}, 10_000);
// The runner has its own process group (so the watchdog can stop the test files with it): pass on a stop.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.kill(-runner.pid, signal));
// 'exit', then the end of its output: a stray grandchild holding the pipe must not keep the run open.
const status = await new Promise((resolve) => runner.on('exit', (code) => resolve(code)));
await Promise.race([
  new Promise((resolve) => runner.stdout.on('close', resolve)),
  new Promise((resolve) => setTimeout(resolve, 5_000)),
]);
clearInterval(watchdog);

if (template.kind === 'postgres') {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${template.template}" WITH (FORCE)`);
  await admin.end();
} else {
  fs.rmSync(path.dirname(template.template), { recursive: true, force: true });
}
process.exit(silenced ? 1 : (status ?? 1));
