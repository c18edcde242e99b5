// The current schema as PostgreSQL's own pg_dump prints it, without what varies between two dumps of the same
// schema (the dump's version lines, session settings, pg_dump 15.14's random \restrict keys). Used by
// scripts/gen-schema.ts to write src/platform/db/schema.sql and by test/platform/schema-file.test.ts to check it.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const SCHEMA_FILE = fileURLToPath(new URL('../src/platform/db/schema.sql', import.meta.url));

const HEADER = `-- The schema every migration in src/platform/db/migrations/ leaves, with the SQL functions of
-- src/runs/lifecycle/functions.sql, as pg_dump prints it. Generated: \`npm run gen:schema\` (needs PostgreSQL);
-- test/platform/schema-file.test.ts fails when it is stale. Read it; change the schema with a new migration.
`;

const VARYING = [/^SET /, /^SELECT pg_catalog\.set_config/, /^\\(un)?restrict /, /^-- Dumped (from|by) /];

export function dumpSchema(databaseUrl: string): string {
  const dump = execFileSync(
    'pg_dump',
    ['--schema-only', '--no-owner', '--no-privileges', '--no-tablespaces', '--dbname', databaseUrl],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const lines = dump.split('\n').filter((line) => !VARYING.some((pattern) => pattern.test(line)));
  return `${HEADER}${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
