// Fails when a slice reads (or writes) another slice's tables outside the allow-list below: a slice's tables are its
// own, and other slices reach them through its index.ts (ARCHITECTURE.md "One owner per concept"). Each table's
// owner is the slice whose tables.ts declares it; Kysely calls and SQL text are both searched, as
// check-run-writes.mjs does, because import analysis cannot see a query.
import fs from 'node:fs';
import path from 'node:path';

/**
 * Reads across slices that stay, each with its reason. A file listed here may touch only the tables it names. An
 * entry no longer needed fails the check too, so the list cannot keep a reason that stopped being true.
 */
const ALLOWED = {
  'src/artifacts/store.ts': {
    tables: ['runs'],
    reason:
      "an artifact's visibility is its run's (team, creator, visibility): joined in the one query that lists them",
  },
  'src/budgets/service.ts': {
    tables: ['teams'],
    reason: 'to refuse a budget for a team that does not exist; candidate to fold into identities/index.ts',
  },
  'src/egress/proxied-execution.ts': {
    tables: ['runs'],
    reason: "the proxy authenticates a harness by its task token and needs the run's team and state on every call",
  },
  'src/environments/store.ts': {
    tables: ['teams', 'users', 'agent_identities'],
    reason: "an environment's creator and the teams it is shared with are shown by name: joined in the listing query",
  },
  'src/execution/engine/store.ts': {
    tables: ['run_attachments', 'run_transcript', 'runs'],
    reason:
      "the engine reads the run it executes (attachments, the conversation's transcript, usage so far) on the run's path",
  },
  'src/runs/lifecycle/functions.sql': {
    tables: ['engines'],
    reason: 'claims and takebacks judge an engine by its heartbeat row in the same statement that moves its runs',
  },
  'src/runs/lifecycle/leases.ts': {
    tables: ['engines'],
    reason: 'the takeback forgets a gone engine in the statement that takes back its runs (one transaction)',
  },
  'src/runs/lifecycle/retention.ts': {
    tables: ['artifacts'],
    reason: "a deleted run's artifact blobs are collected in the transaction that deletes the run",
  },
  'src/runs/store.ts': {
    tables: ['users', 'agent_identities', 'artifacts', 'run_scores', 'scorers'],
    reason: "a page of runs carries each run's creator, artifacts and scores: one statement per page, not one per run",
  },
  'src/schedules/store.ts': {
    tables: ['users'],
    reason: "a schedule's creator and last editor are shown by name: joined in the listing query",
  },
  'src/scores/store.ts': {
    tables: ['runs'],
    reason: 'a score is accepted only from a judge run that is executing; candidate to fold into runs/index.ts',
  },
  'src/webhooks/store.ts': {
    tables: ['automation_firings'],
    reason: "a delivery's log line shows which automations it fired; candidate to fold into automations/index.ts",
  },
  'src/workers/store.ts': {
    tables: ['runs'],
    reason: 'the worker hub checks that a worker still holds the execution it reports on (its lease), per report',
  },
  'src/workers/tasks.ts': {
    tables: ['runs'],
    reason: "a worker's setup result is recorded for the run's environment, read from the run it reports on",
  },
};

function files(directory, test) {
  if (!fs.existsSync(directory)) return [];
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    return entry.isDirectory() ? files(full, test) : test(entry.name) ? [full] : [];
  });
}

/** table -> owning slice, from each slice's `export interface ...Tables { name: Type; ... }`. */
function owners() {
  const owner = new Map();
  const slices = fs
    .readdirSync('src', { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'app')
    .map((entry) => entry.name);
  for (const slice of slices) {
    const declarations = slice === 'platform' ? ['src/platform/db/tables.ts'] : [`src/${slice}/tables.ts`];
    for (const file of declarations) {
      if (!fs.existsSync(file)) continue;
      const text = fs.readFileSync(file, 'utf8');
      for (const block of text.matchAll(/export interface \w+Tables\s*(?:extends [^{]+)?\{([^}]*)\}/g))
        for (const column of block[1].matchAll(/^\s*([a-z_][a-z0-9_]*)\s*:/gm)) owner.set(column[1], slice);
    }
  }
  return owner;
}

const owner = owners();
const tables = [...owner.keys()].sort((a, b) => b.length - a.length).join('|');
const PATTERNS = [
  new RegExp(
    `\\b(?:selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin|with)\\(\\s*['"\`](${tables})\\b`,
    'g',
  ),
  new RegExp(`\\b(?:FROM|JOIN|UPDATE|INTO|TABLE)\\s+(?:ONLY\\s+)?(${tables})\\b`, 'g'),
];

const found = new Map();
for (const file of files(
  'src',
  (name) => (name.endsWith('.ts') && !name.endsWith('.test.ts')) || name.endsWith('.sql'),
)) {
  const slice = file.split(path.sep)[1];
  if (slice === 'app' || slice === 'platform' || !fs.statSync(path.join('src', slice)).isDirectory()) continue;
  const text = fs.readFileSync(file, 'utf8');
  for (const pattern of PATTERNS)
    for (const match of text.matchAll(pattern)) {
      const table = match[1];
      const tableOwner = owner.get(table);
      if (tableOwner === slice || tableOwner === 'platform') continue;
      if (!found.has(file)) found.set(file, new Set());
      found.get(file).add(table);
    }
}

const problems = [];
for (const [file, touched] of found) {
  const allowed = new Set(ALLOWED[file]?.tables ?? []);
  const extra = [...touched].filter((table) => !allowed.has(table));
  if (extra.length > 0)
    problems.push(`${file} touches ${extra.map((table) => `${table} (${owner.get(table)}'s)`).join(', ')}`);
}
for (const [file, entry] of Object.entries(ALLOWED)) {
  const unused = entry.tables.filter((table) => !found.get(file)?.has(table));
  if (unused.length > 0)
    problems.push(`${file}: the allow-list names ${unused.join(', ')}, which it no longer touches`);
}
if (problems.length > 0) {
  process.stderr.write(
    `a slice touches another slice's tables outside scripts/check-table-reads.mjs's allow-list:\n${problems.join('\n')}\n`,
  );
  process.exit(1);
}
process.stdout.write(`table reads across slices: only the ${Object.keys(ALLOWED).length} allowed files\n`);
