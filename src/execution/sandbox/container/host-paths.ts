import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineClient } from './engine-client.js';

/** One mount of the server's own container, as the engine's inspect reports it. */
export interface EngineMount {
  Type?: string;
  Source?: string;
  Destination?: string;
}

/** The parts of the engine's inspect of the server's own container that say where its files are on the host. */
export interface OwnContainer {
  Id: string;
  Mounts?: EngineMount[] | null;
  GraphDriver?: { Name?: string; Data?: Record<string, string> | null } | null;
  HostConfig?: { Tmpfs?: Record<string, string> | null } | null;
}

/**
 * Where the server is, as far as the engine's bind sources go. The engine resolves every bind source of a run's
 * container (the workspace, Hangar's node and dist, the API socket) in its own file system, the host's: a server
 * on the host names them as they are; a server in a container of that engine names them through its container's
 * mounts and root file system, which the engine itself reports (GET /containers/{id}/json).
 */
export type ServerPlace =
  | { kind: 'host' }
  | { kind: 'container'; id: string; toHost: (file: string) => string; describe: string }
  | { kind: 'unknown'; problem: string };

/** The files every engine binds into its containers from a directory of that container's own. */
const ENGINE_FILES = new Set(['/etc/hostname', '/etc/hosts', '/etc/resolv.conf', '/run/.containerenv']);

/**
 * The IDs this process's container may have: the engines bind /etc/hostname, /etc/hosts and /etc/resolv.conf from
 * a directory of the container's own (Docker's /var/lib/docker/containers/<id>/, Podman's
 * .../overlay-containers/<id>/userdata/), which /proc/self/mountinfo names as those mounts' roots. None: not in a
 * container of an engine. (Not /.dockerenv, which outlives the image build on some hosts, nor any mount naming a
 * container: a host's mountinfo shows its containers' shm mounts.)
 */
export function ownContainerIds(mountinfo: string): string[] {
  const ids = mountinfo.split('\n').flatMap((line) => {
    const [, , , root = '', point = ''] = line.split(' ');
    if (!ENGINE_FILES.has(point)) return [];
    const match = /containers\/([0-9a-f]{64})\//.exec(root);
    return match ? [match[1]!] : [];
  });
  return [...new Set(ids)];
}

/** The mount points of this process's mount namespace (the fifth field of each mountinfo line, unescaped). */
export function mountPoints(mountinfo: string): Set<string> {
  return new Set(
    mountinfo
      .split('\n')
      .map((line) => line.split(' ')[4])
      .filter((point): point is string => Boolean(point))
      .map((point) =>
        point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))),
      ),
  );
}

/**
 * The host path of a path of the server's container: below a bind mount or a volume, the mount's source; elsewhere
 * in the container's own root file system, the engine's merged view of it (overlay storage's MergedDir, there as
 * long as the container runs). A tmpfs, or a root file system the storage driver shows as no directory, has no
 * host path: the error says what to mount instead.
 */
export function hostPathMapper(container: OwnContainer): (file: string) => string {
  const mounts = (container.Mounts ?? [])
    .filter((mount) => mount.Destination)
    .sort((a, b) => b.Destination!.length - a.Destination!.length);
  const tmpfs = Object.keys(container.HostConfig?.Tmpfs ?? {});
  const merged = container.GraphDriver?.Data?.MergedDir;
  return (file) => {
    const absolute = path.resolve(file);
    for (const destination of tmpfs)
      if (within(absolute, destination)) throw noHostPath(absolute, `on a tmpfs of this container (${destination})`);
    for (const mount of mounts) {
      if (!within(absolute, mount.Destination!)) continue;
      if ((mount.Type === 'bind' || mount.Type === 'volume') && mount.Source)
        return path.join(mount.Source, path.relative(mount.Destination!, absolute));
      throw noHostPath(absolute, `on a ${mount.Type ?? 'mount'} of this container (${mount.Destination})`);
    }
    if (merged) return path.join(merged, absolute);
    throw noHostPath(
      absolute,
      `in this container's own file system, which the engine's storage (${container.GraphDriver?.Name ?? 'unknown'}) shows as no directory on the host`,
    );
  };
}

function noHostPath(file: string, where: string): Error {
  return new Error(
    `${file} is ${where}: the engine cannot bind it into a run's container. Mount it from the host (a volume or a bind mount) at that path`,
  );
}

/** `source:destination[:options]` with its source as the host names it. */
export function hostBind(bind: string, toHost: (file: string) => string): string {
  const separator = bind.indexOf(':');
  return separator < 0 ? toHost(bind) : `${toHost(bind.slice(0, separator))}${bind.slice(separator)}`;
}

/** Finds the server's own container through the engine, when the server runs in one. */
export async function locateServer(client: EngineClient): Promise<ServerPlace> {
  const mountinfo = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  const candidates = ownContainerIds(mountinfo);
  if (candidates.length === 0) return { kind: 'host' };
  const points = mountPoints(mountinfo);
  for (const id of candidates) {
    const { status, body } = await client.call<OwnContainer>(
      'GET',
      `/containers/${encodeURIComponent(id)}/json`,
      undefined,
      {},
      [404],
    );
    if (status === 404) continue;
    // Destinations as this process names them (/var/run is often a link to /run).
    const mounts = (body.Mounts ?? [])
      .filter((mount) => mount.Destination)
      .map((mount) => ({ ...mount, Destination: realPath(mount.Destination!) }));
    // The same container, not one that happens to have this name: each of its mounts is a mount point here.
    if (!mounts.every((mount) => points.has(mount.Destination))) continue;
    const toHost = hostPathMapper({ ...body, Mounts: mounts });
    const shown = mounts.map((mount) => `${mount.Destination} is ${mount.Source ?? mount.Type} on the host`);
    const root = body.GraphDriver?.Data?.MergedDir;
    return {
      kind: 'container',
      id: body.Id,
      toHost,
      describe: `this server runs in the engine's container ${body.Id.slice(0, 12)}: ${[
        ...shown,
        root
          ? `its own files are under ${root}`
          : `its own files have no host path (storage ${body.GraphDriver?.Name ?? 'unknown'})`,
      ].join('; ')}`,
    };
  }
  return {
    kind: 'unknown',
    problem:
      `this server runs in a container that the engine at ${client.dockerHost} does not know (looked for ${candidates.map((id) => id.slice(0, 12)).join(', ')}): ` +
      "the socket is another engine's (or another user's rootless Podman) than the one that runs Hangar. The engine binds the workspace and Hangar's runtime into each run's container by their host paths, " +
      "which Hangar learns from its own container: mount the socket of the engine that runs Hangar's container",
  };
}

/** Bind sources translated for the engine; the server's place is found once (again after a failure). */
export class HostPaths {
  private place: Promise<ServerPlace> | undefined;

  constructor(private readonly client: EngineClient) {}

  located(): Promise<ServerPlace> {
    this.place ??= locateServer(this.client).then((place) => {
      if (place.kind === 'unknown') this.place = undefined;
      return place;
    });
    const pending = this.place;
    pending.catch(() => {
      if (this.place === pending) this.place = undefined;
    });
    return pending;
  }

  /** The binds with their sources as the engine must name them; throws, saying why, when one has no host path. */
  async binds(binds: string[]): Promise<string[]> {
    const place = await this.located();
    if (place.kind === 'host') return binds;
    if (place.kind === 'unknown') throw new Error(place.problem);
    return binds.map((bind) => hostBind(bind, place.toHost));
  }
}

/** Hangar's install (dist, node_modules), two levels above dist/execution/sandbox/container. */
const INSTALL_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * The container sandbox's check for `hangar doctor` and the status page: the engine answers, and every path the
 * sandbox binds into a run's container (the workspaces, Hangar's node and install, the API sockets' directory) has
 * a host path the engine can bind. A missing socket or a wrong mapping is said here, not by a failed run later.
 */
export async function containerEngineCheck(
  dockerHost: string,
  workspaceDir: string,
): Promise<{ ok: boolean; warning?: boolean; detail: string }> {
  let client: EngineClient;
  try {
    client = new EngineClient(dockerHost);
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
  let version: string;
  try {
    const { body } = await client.call<{ Version?: string; Components?: Array<{ Name?: string }> }>('GET', '/version');
    const podman = (body.Components ?? []).some((component) => /podman/i.test(component.Name ?? ''));
    version = `${podman ? 'Podman' : 'Docker Engine'} ${body.Version ?? '(version unknown)'}`;
  } catch (error) {
    return { ok: false, detail: engineUnreachable(client.dockerHost, error as Error) };
  }
  const place = await locateServer(client).catch(
    (error: Error): ServerPlace => ({ kind: 'unknown', problem: error.message }),
  );
  if (place.kind === 'unknown')
    return { ok: false, detail: `${client.dockerHost} answers (${version}), but ${place.problem}` };
  if (place.kind === 'host')
    return { ok: true, detail: `${client.dockerHost} answers (${version}); this server runs on the host` };
  const wanted = [workspaceDir, process.execPath, os.tmpdir(), INSTALL_ROOT];
  const problems = wanted.flatMap((file) => {
    try {
      place.toHost(realPath(file));
      return [];
    } catch (error) {
      return [(error as Error).message];
    }
  });
  if (problems.length > 0)
    return { ok: false, detail: `${client.dockerHost} answers (${version}), but ${problems.join('. ')}` };
  // egress.ts loads a networked container's rules with nsenter into its network namespace, from the engine's host
  // and as root: a server in a container (its own PID namespace, no capabilities) cannot.
  const networked =
    '. Runs that ask for a network cannot start from this container: their egress rules need a root server on the host (docs/deploy.md)';
  return {
    ok: true,
    warning: true,
    detail: `${client.dockerHost} answers (${version}); ${place.describe}${networked}`,
  };
}

/** Why the engine's socket gave no answer, with what to do about it. */
function engineUnreachable(dockerHost: string, error: Error): string {
  const socket = dockerHost.startsWith('unix://') ? dockerHost.slice('unix://'.length) : undefined;
  if (socket && !fs.existsSync(socket))
    return `${socket} does not exist: mount the engine's socket there (the host's /var/run/docker.sock, or Podman's /run/podman/podman.sock) or fix DOCKER_HOST`;
  if (/EACCES/.test(error.message))
    return `${socket ?? dockerHost}: permission denied for uid ${process.getuid?.()}: give the server the socket's group (compose group_add, stat -c %g on the host) or use a socket this user owns`;
  return `the container engine at ${dockerHost} does not answer: ${error.message}`;
}

function within(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
