// The public surface of the environments slice: other slices and the composition root import only this module.
export { limitProblem } from './config.js';
export { type RepoRef, repoKey } from './github.js';
export { registerEnvironmentRoutes } from './http.js';
export type { EnvironmentActivity, RunActivityLookup, RunViewer } from './run-activity.js';
export type { EnvironmentConfig, EnvironmentForRun } from './schemas.js';
export { EnvironmentsService } from './service.js';
export { SkillCatalog } from './skills/catalog.js';
export { GitMirror } from './skills/git.js';
export { registerSkillRoutes } from './skills/http.js';
export { MAX_SKILL_BYTES, parseSkill } from './skills/parse.js';
export { SkillsService } from './skills/service.js';
export { EnvironmentSnapshots, type SnapshotRecord, type SnapshotScope } from './snapshots.js';
