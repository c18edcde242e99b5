// Fails when code outside src/runs/lifecycle/ writes the run tables (runs, run_events, run_inputs): the run
// lifecycle is their only writer. Kysely calls and SQL text are both searched, in TypeScript and SQL files; import
// analysis cannot see a write, so this reads the text.
import fs from 'node:fs';
import path from 'node:path';

const OWNER = 'src/runs/lifecycle/';

/** Numbered migrations are history and never change; those that wrote the run tables in their SQL functions. */
const PAST_MIGRATIONS = [
  'src/platform/db/migrations/0007_execution.sql',
  'src/platform/db/migrations/0010_workers.sql',
  'src/platform/db/migrations/0011_webhooks.sql',
  'src/platform/db/migrations/0012_engine_round_trips.sql',
  // Fills the columns of a run's queue wait and run time for the runs before it; the lifecycle keeps them since.
  'src/platform/db/migrations/0039_run_times.sql',
  // Fills where the runs before it came from (root, automation, factory, trigger); set at creation since.
  'src/platform/db/migrations/0048_run_origin_fields.sql',
  // Generated: the schema the migrations and src/runs/lifecycle/functions.sql make, the functions' bodies included.
  'src/platform/db/schema.sql',
];

const TABLE = '(runs|run_events|run_inputs)';
const WRITES = [
  new RegExp(`\\b(insertInto|updateTable|deleteFrom|mergeInto)\\(\\s*['"\`]${TABLE}\\b`, 'g'),
  new RegExp(
    `\\b(INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|MERGE\\s+INTO|TRUNCATE(\\s+TABLE)?)\\s+(ONLY\\s+)?${TABLE}\\b`,
    'gi',
  ),
];

function sources(directory) {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sources(full);
    const checked = (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) || entry.name.endsWith('.sql');
    return checked ? [full] : [];
  });
}

const allowed = new Set(PAST_MIGRATIONS);
const found = [];
for (const file of sources('src')) {
  if (file.startsWith(OWNER) || allowed.has(file)) continue;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, number) => {
    if (WRITES.some((pattern) => line.match(pattern))) found.push(`${file}:${number + 1}: ${line.trim()}`);
  });
}

if (found.length > 0) {
  process.stderr.write(`the run tables are written only in ${OWNER}; found writes elsewhere:\n${found.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write('run table writes: only in the run lifecycle\n');
