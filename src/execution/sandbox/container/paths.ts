import fs from 'node:fs';

/** Where the workspace is inside every container. */
export const CONTAINER_WORKSPACE = '/workspace';
/** Hangar's node and setsid inside every container, read-only. */
export const RUNTIME_BIN = '/opt/hangar/bin';
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A host path as the container sees it: the workspace at /workspace; anything else (runtime paths) unchanged. */
export function translate(value: string, workspace: string): string {
  // Only the workspace itself or a path below it: `<run>.1` is not a prefix of its sibling `<run>.10`.
  const escaped = workspace.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return value.replace(new RegExp(`${escaped}(?=/|:|$)`, 'g'), CONTAINER_WORKSPACE);
}

/** The image's usual directories, the directories of Hangar's runtime the caller's PATH names, then Hangar's node. */
export function containerPath(hostPath: string | undefined, runtimePaths: string[]): string {
  const runtime = (hostPath ?? '')
    .split(':')
    .filter((entry) => runtimePaths.some((root) => entry === root || entry.startsWith(`${root}/`)));
  return [SYSTEM_PATH, ...runtime, RUNTIME_BIN].join(':');
}

let setsid: string | undefined;
/** The host's setsid, bound into every container: each exec starts in a session of its own (exec.ts). */
export function setsidPath(): string {
  setsid ??= ['/usr/bin/setsid', '/bin/setsid'].find((candidate) => fs.existsSync(candidate)) ?? '/usr/bin/setsid';
  return setsid;
}
