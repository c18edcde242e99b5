import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SnapshotRecord } from '../../environments/index.js';
import { repoKey } from '../../environments/index.js';
import { WorkspaceFiles } from '../workspace/files.js';
import type { SetupResult, Workspaces } from '../workspace/workspace.js';
import { touchesLockfile } from './key.js';
import type { PrepareRequest } from './request.js';

const REPOSITORY_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * An updated start's step (warm-start.ts): brings a restored snapshot's repositories to their new commits, then runs
 * setup when the environment says so; 'failed' when what the snapshot held cannot be brought up to date.
 */
export async function updateRepositories(
  deps: { workspaces: Workspaces; warn: (error: unknown, message: string) => void },
  snapshot: SnapshotRecord,
  commits: Record<string, string>,
  request: PrepareRequest,
  timed: <T>(step: string, work: () => Promise<T>) => Promise<T>,
): Promise<SetupResult | 'failed'> {
  const { workspaces } = deps;
  const cache = workspaces.gitCache;
  const { environment, report, abort } = request;
  let lockfileChanged = false;
  for (const ref of environment.github_repos) {
    const name = `${ref.owner}/${ref.repo}`;
    const from = snapshot.commits[name];
    const to = commits[name];
    if (!from || !to || !REPOSITORY_NAME.test(ref.repo)) return 'failed';
    if (from === to) continue;
    const moved = await timed('update', async () => {
      const changed = await cache.changedPaths(repoKey(ref), from, to).catch(() => ['package-lock.json']);
      lockfileChanged ||= touchesLockfile(changed);
      const bundleName = `.hangar-update-${randomBytes(6).toString('hex')}.bundle`;
      const aside = path.join(cache.directory, '.bundles');
      await fs.promises.mkdir(aside, { recursive: true });
      const file = path.join(aside, bundleName);
      try {
        const bundled = await cache.reading(repoKey(ref), () => cache.bundle(repoKey(ref), from, to, file));
        const data = await fs.promises.readFile(file);
        // Written by the server without following anything the snapshot holds (the name is new and its own).
        await WorkspaceFiles.with(request.workspace, workspaces.owner, (files) => files.writeFile(bundleName, data));
        // Inside the sandbox, like setup: git reads the repository's own configuration, which setup may have
        // changed, so it never runs outside it. The upstream branch follows, as a fetch would have moved it.
        const script =
          `cd -- '${ref.repo}' && git fetch --quiet --no-tags '../${bundleName}' '${bundled}' && ` +
          `git reset --quiet --hard FETCH_HEAD && { u=$(git rev-parse --symbolic-full-name '@{u}' 2>/dev/null); ` +
          `[ -z "$u" ] || git update-ref "$u" FETCH_HEAD; }; s=$?; rm -f -- '../${bundleName}'; exit $s`;
        const started = Date.now();
        const result = await workspaces.runSetupCommands(request.workspace, [script], async () => {}, abort);
        if (result.ok) await report('environment_repo_updated', { repo: name, duration_ms: Date.now() - started });
        return result.ok;
      } finally {
        await fs.promises.rm(file, { force: true });
      }
    }).catch((error) => {
      deps.warn(error, 'could not bring a snapshot repository up to date');
      return false;
    });
    if (!moved) return 'failed';
  }
  const policy = environment.setup_on_update ?? 'when_lockfiles_change';
  const rerun = policy === 'always' || (policy === 'when_lockfiles_change' && lockfileChanged);
  if (!rerun) return { ok: true };
  return timed('setup', () =>
    workspaces.runSetupCommands(request.workspace, environment.setup_commands, report, abort),
  );
}
