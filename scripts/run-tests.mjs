// Runs the whole suite with Node's test runner: unit tests beside the code (src/**/*.test.ts) and integration
// tests (test/**/*.test.ts). The database template is built once here and copied by every test file.
// With TEST_DATABASE_URL set, every test file gets its own PostgreSQL database; otherwise its own PGlite.
import { execFileSync, spawnSync } from 'node:child_process';
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
const files = only.length > 0 ? only : [...findTests('src'), ...findTests('test')].sort();
const template = JSON.parse(
  execFileSync(process.execPath, ['--import', 'tsx', 'test/support/template.ts'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
);
process.stdout.write(
  `hangar tests: ${files.length} files on ${template.kind === 'postgres' ? `PostgreSQL (${process.env.TEST_DATABASE_URL})` : 'PGlite'}\n`,
);

// --test-force-exit: a file whose tests and hooks have all ended exits even if a failed test left a handle open (a
// server it could not stop); without it that file, and with it the whole run, would wait for good.
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-force-exit', '--test-reporter=spec', ...files],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      HANGAR_TEST_TEMPLATE: JSON.stringify(template),
      // The suite's harnesses and MCP servers are files of this checkout: a bwrap sandbox must see it even when it
      // lives under /tmp, which the sandbox replaces with an empty one. HANGAR_SANDBOX picks the sandbox as usual.
      HANGAR_SANDBOX_READ_ONLY_PATHS: process.env.HANGAR_SANDBOX_READ_ONLY_PATHS ?? process.cwd(),
    },
  },
);

if (template.kind === 'postgres') {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${template.template}" WITH (FORCE)`);
  await admin.end();
} else {
  fs.rmSync(path.dirname(template.template), { recursive: true, force: true });
}
process.exit(result.status ?? 1);
