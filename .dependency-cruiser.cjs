// The slice boundaries of src/ (see ../shared/DESIGN.md "Layout"), checked by `npm run lint:deps`.
// Cycles between slices are checked by scripts/check-slice-cycles.mjs, writes to the run tables by
// scripts/check-run-writes.mjs: dependency-cruiser sees neither.

const SLICES = 'artifacts|automations|egress|environments|execution|factory|identities|mcp|models|runs|schedules|scores|secrets|webhooks|workers';

/**
 * Imports of another slice's internals that stay until the files making them change hands. Each entry is the
 * importing file; the lead empties this list as the issue 22 branches merge.
 */
const KNOWN_REACHES = [
  // The runs slice is being rewritten around runs/lifecycle/ (lifecycle helper): its imports of execution,
  // identities, models and artifacts modules move to their index.ts then.
  '^src/runs/',
  // Lifecycle helper's files: they use the execution store directly until RunLifecycle replaces it.
  '^src/execution/(store|ledger|debug-sessions|outcome)\\.ts$',
  '^src/workers/(store|tasks|hub)\\.ts$',
  // Artifacts sit below runs and execution; until the composition root passes ArtifactsService a run port
  // (visibility, the executing run's team, progress events) they call runs/store and execution/store.
  '^src/artifacts/(service|store)\\.ts$',
];

module.exports = {
  forbidden: [
    {
      name: 'slice-through-index',
      comment: "A slice uses another slice only through that slice's index.ts, never its store or other modules.",
      severity: 'error',
      from: { path: `^src/(${SLICES})/`, pathNot: ['\\.test\\.ts$', ...KNOWN_REACHES] },
      to: { path: `^src/(${SLICES})/`, pathNot: ['^src/$1/', `^src/(${SLICES})/index\\.ts$`] },
    },
    {
      name: 'root-not-into-stores',
      comment: "The composition root (server.ts, app/, main.ts) calls slices' public functions, not their stores.",
      severity: 'error',
      // server.ts until app/ replaces it: it is to take roleInTeam, reportedSkills, teamSkills and
      // DELIVERIES_CHANNEL from the identities, workers, factory and webhooks index.ts.
      from: { path: '^src/(app/|[^/]+\\.ts$)', pathNot: ['\\.test\\.ts$', '^src/server\\.ts$'] },
      to: { path: '/store\\.ts$', pathNot: '^src/platform/' },
    },
    {
      name: 'platform-imports-no-slice',
      comment: 'platform/ is shared infrastructure: it imports no slice (nor config.ts or the composition root).',
      severity: 'error',
      // auth.ts only re-exports identities' request accessors until runs/http.ts, runs/output-http.ts and
      // server.ts import them from identities/index.ts; then it goes.
      from: { path: '^src/platform/', pathNot: ['\\.test\\.ts$', '^src/platform/http/auth\\.ts$'] },
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
