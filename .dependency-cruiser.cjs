// The slice boundaries of src/ (see ../shared/DESIGN.md "Layout"), checked by `npm run lint:deps`.
// Cycles between slices are checked by scripts/check-slice-cycles.mjs, writes to the run tables by
// scripts/check-run-writes.mjs: dependency-cruiser sees neither.

const fs = require('node:fs');
const path = require('node:path');

// Every folder of src/ is a slice but the composition root and the platform: derived, so that a new slice cannot
// escape the rules below by being left out of a list written by hand (three did, issue 55 item 4).
const NOT_SLICES = new Set(['app', 'platform']);
const SLICES = fs
  .readdirSync(path.join(__dirname, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !NOT_SLICES.has(entry.name))
  .map((entry) => entry.name)
  .sort()
  .join('|');

module.exports = {
  forbidden: [
    {
      name: 'slice-through-index',
      comment:
        "A slice uses another slice only through that slice's index.ts, never its store or other modules; " +
        "its client verbs (cli.ts) use another slice's client verbs' module (cli.ts), which loads none of the server.",
      severity: 'error',
      from: { path: `^src/(${SLICES})/`, pathNot: ['\\.test\\.ts$'] },
      to: {
        path: `^src/(${SLICES})/`,
        pathNot: ['^src/$1/', `^src/(${SLICES})/index\\.ts$`, `^src/(${SLICES})/cli\\.ts$`],
      },
    },
    {
      name: 'cli-from-cli',
      comment:
        "Another slice's cli.ts is for the client side: only a slice's own client verbs (its cli.ts and the cli-*.ts " +
        'modules that file is made of) import it.',
      severity: 'error',
      from: {
        path: `^src/(${SLICES})/`,
        pathNot: ['\\.test\\.ts$', `^src/(${SLICES})/cli\\.ts$`, `^src/(${SLICES})/cli-[a-z-]+\\.ts$`],
      },
      to: { path: `^src/(${SLICES})/cli\\.ts$`, pathNot: ['^src/$1/'] },
    },
    {
      name: 'root-through-index',
      comment:
        "The composition root (server.ts, app/, main.ts) uses a slice only through the slice's index.ts; " +
        "src/database.ts composes the slices' tables.ts into DB, and src/cli-commands.ts the slices' client verbs " +
        '(cli.ts: the client loads none of the server, scripts/check-client-imports.mjs).',
      severity: 'error',
      from: { path: '^src/(app/|[^/]+\\.ts$)', pathNot: ['\\.test\\.ts$'] },
      to: {
        path: `^src/(${SLICES})/`,
        pathNot: [`^src/(${SLICES})/index\\.ts$`, `^src/(${SLICES})/tables\\.ts$`, `^src/(${SLICES})/cli\\.ts$`],
      },
    },
    {
      name: 'cli-from-cli-commands',
      comment: "Of the composition root, only src/cli-commands.ts registers the slices' client verbs.",
      severity: 'error',
      from: { path: '^src/(app/|[^/]+\\.ts$)', pathNot: ['\\.test\\.ts$', '^src/cli-commands\\.ts$'] },
      to: { path: `^src/(${SLICES})/cli\\.ts$` },
    },
    {
      name: 'platform-imports-no-slice',
      comment: 'platform/ is shared infrastructure: it imports no slice (nor config.ts or the composition root).',
      severity: 'error',
      from: { path: '^src/platform/', pathNot: ['\\.test\\.ts$'] },
      to: { path: '^src/', pathNot: ['^src/platform/', '^src/database\\.ts$'] },
    },
    {
      name: 'platform-database-type-only',
      comment:
        'Of platform/, only db/connect.ts reaches src/database.ts: it types the handle it opens with the composed ' +
        'tables, so that every caller queries with Kysely checking each table.',
      severity: 'error',
      from: { path: '^src/platform/', pathNot: ['^src/platform/db/connect\\.ts$'] },
      to: { path: '^src/database\\.ts$' },
    },
    {
      name: 'sandbox-backends-from-mode',
      comment:
        'Only execution/sandbox/mode.ts builds a sandbox backend (and knows the kinds); everyone else has the port ' +
        '(sandbox/backend.ts: capabilities and methods). scripts/check-sandbox-kinds.mjs finds kind checks.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: [
          '^src/execution/sandbox/mode\\.ts$',
          '^src/execution/sandbox/(bwrap|process|container|kubernetes)/',
          '\\.test\\.ts$',
        ],
      },
      to: { path: '^src/execution/sandbox/(bwrap|process|container|kubernetes)/backend\\.ts$' },
    },
    {
      name: 'sandbox-implementations-behind-the-port',
      comment:
        "A sandbox backend's folder is its own: the rest of src/ reaches it through the port (sandbox/backend.ts) " +
        "and the sandbox's public module (sandbox/index.ts, which may pass on a backend's settings or checks for " +
        'the composition root). container/policy.ts is the container settings from the configuration, for the ' +
        'composition root; container/limits.ts the limits a run may ask (memory, cpus, pids), parsed the same for ' +
        "every backend that enforces them (the Kubernetes backend's pods). TEMPORARY: run/ takes registryOf (an " +
        "image's registry, for its credentials) from container/pull.ts.",
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: [
          '^src/execution/sandbox/(mode|index)\\.ts$',
          '^src/execution/sandbox/(bwrap|process|container|kubernetes)/',
          '\\.test\\.ts$',
        ],
      },
      to: {
        path: '^src/execution/sandbox/(bwrap|process|container|kubernetes)/',
        pathNot: [
          '^src/execution/sandbox/container/(policy|limits)\\.ts$',
          '^src/execution/sandbox/container/pull\\.ts$',
        ],
      },
    },
    {
      name: 'sandbox-implementations-apart',
      comment: 'One sandbox backend never reaches into another\'s folder; what two share lives in sandbox/ itself.',
      severity: 'error',
      from: { path: '^src/execution/sandbox/(bwrap|process|container|kubernetes)/' },
      to: {
        path: '^src/execution/sandbox/(bwrap|process|container|kubernetes)/',
        pathNot: ['^src/execution/sandbox/$1/'],
      },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles in src, type-only ones included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: they are dependencies too.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
