import fs from 'node:fs';
import path from 'node:path';
import { failureReason, OutputTail } from '../run/output-tail.js';
import { scrubbedEnvironment, spawnSandboxed } from '../sandbox/index.js';
import { WorkspaceFiles } from './files.js';
import { GUEST_GIT_CLEANUP, guestGitEnvironment } from './git-config.js';
import { workspaceHome } from './home.js';
import type { WorkspaceOptions } from './options.js';

// Hangar's own commands in a workspace (the publish's commit and bundle, a guest run's git cleanup), run in the
// workspace's sandbox without network: the repository's configuration and hooks are the run's.

/**
 * Commits what is uncommitted in the workspace's `repo` with `message` and bundles its HEAD, inside the run's
 * sandbox without network: the repository's configuration and hooks are the run's, so they run only where the
 * run's own code runs, never in the server. The server then reads the bundle (plain data, no link followed).
 */
export async function bundleChanges(
  options: WorkspaceOptions,
  directory: string,
  repo: string,
  message: string,
  maxBytes: number,
): Promise<Buffer> {
  const home = await workspaceHome(directory, options.owner);
  const bundle = `.hangar-publish-${repo}.bundle`;
  const script = [
    'cd -- "$1" || exit 1',
    'git add --all || exit 1',
    'git diff --cached --quiet || git -c user.name=Hangar -c user.email=hangar@users.noreply.github.com commit --quiet --no-verify -m "$2" || exit 1',
    'rm -f -- "../$3"',
    'git bundle create "../$3" HEAD 2>&1 || exit 1',
  ].join('\n');
  const exit = await runOffline(
    options,
    directory,
    ['sh', '-c', script, 'sh', repo, message, bundle],
    scrubbedEnvironment({ GIT_TERMINAL_PROMPT: '0' }, home),
  );
  if (exit.code !== 0)
    throw new Error(`committing the changes of ${repo} failed: ${failureReason(exit.output) ?? `exit ${exit.code}`}`);
  try {
    return await WorkspaceFiles.with(directory, options.owner, (files) => files.readFile(bundle, { maxBytes }));
  } finally {
    // A name at the top of the server's own directory: unlink removes whatever is there, link or not, following none.
    await fs.promises.unlink(path.join(directory, bundle)).catch(() => undefined);
  }
}

/**
 * In a run of a team that does not own its environment, between setup and the agent: removes what setup left in
 * git's configuration that runs commands (GUEST_GIT_CLEANUP, in the run's sandbox without network, so nothing is
 * read or followed by the server). `repos` are the clones' directories. The agent's git then runs with
 * guestGitEnvironment(..., home).
 */
export async function cleanOwnersGitConfig(
  options: WorkspaceOptions,
  directory: string,
  repos: string[],
): Promise<{ ok: true; home: string } | { ok: false; message: string }> {
  const home = await workspaceHome(directory, options.owner);
  const exit = await runOffline(
    options,
    directory,
    ['sh', '-c', GUEST_GIT_CLEANUP, 'sh', ...repos],
    scrubbedEnvironment(guestGitEnvironment({ GIT_TERMINAL_PROMPT: '0' }, home), home),
  );
  if (exit.code === 0) return { ok: true, home };
  return {
    ok: false,
    message: `Hangar could not clear the git settings the environment's setup left (${failureReason(exit.output) ?? `exit ${exit.code}`}): the run of a team that does not own the environment does not start with them`,
  };
}

/** Runs a command of Hangar's own in the workspace's sandbox, without network, within setup's limits. */
async function runOffline(
  options: WorkspaceOptions,
  directory: string,
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string[] }> {
  const output = new OutputTail();
  const child = spawnSandboxed({
    mode: options.sandbox,
    argv,
    cwd: directory,
    env,
    hiddenPaths: options.hiddenPaths,
    allowNetwork: false,
    timeoutMs: options.setupTimeoutMs,
    maxOutputBytes: options.maxOutputBytes,
    keepStdinOpen: false,
  });
  child.onStdoutLine((line) => output.push(line));
  child.onStderrLine((line) => output.push(line));
  const exit = await child.exited;
  return { code: exit.code, output: output.lines() };
}
