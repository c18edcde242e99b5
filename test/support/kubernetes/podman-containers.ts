import type { Readable } from 'node:stream';
import { demultiplex, EngineClient } from '../../../src/execution/sandbox/container/engine-client.js';

/**
 * The double's container runtime: one Podman container per Kubernetes container, over Podman's Docker-compatible
 * API (the socket HANGAR_TEST_PODMAN_HOST names). Every container runs on the host's network (see kubelet.ts for
 * why) and carries the double's label, so one double's leftovers can be found and removed.
 */
export const DOUBLE_LABEL = 'dev.hangar.kubernetes-double';
export const DOUBLE_PID_LABEL = 'dev.hangar.kubernetes-double.pid';

export interface ContainerLaunch {
  name: string;
  image: string;
  /** The image's entrypoint replaced (Kubernetes `command`), and its command replaced (`args`). */
  entrypoint?: string[];
  cmd?: string[];
  env: string[];
  workingDir?: string;
  user?: string;
  binds: string[];
  memoryBytes?: number;
  cpus?: number;
  capDrop?: string[];
  capAdd?: string[];
  noNewPrivileges?: boolean;
  readOnlyRootfs?: boolean;
  privileged?: boolean;
  seccompUnconfined?: boolean;
  labels: Record<string, string>;
}

export interface ContainerEnd {
  exitCode: number;
  oomKilled: boolean;
  startedAt: string;
  finishedAt: string;
}

export class PodmanContainers {
  readonly client: EngineClient;

  constructor(readonly dockerHost: string) {
    this.client = new EngineClient(dockerHost);
  }

  /** The image's ID and its configured user, or undefined when the engine does not hold it (no pull: no registry). */
  async image(reference: string): Promise<{ id: string; user: string } | undefined> {
    const { status, body } = await this.client.call<{ Id: string; Config?: { User?: string } }>(
      'GET',
      `/images/${encodeURIComponent(reference)}/json`,
      undefined,
      {},
      [404],
    );
    if (status === 404) return undefined;
    return { id: body.Id, user: body.Config?.User ?? '' };
  }

  async create(launch: ContainerLaunch): Promise<string> {
    const { body } = await this.client.call<{ Id: string }>(
      'POST',
      `/containers/create?name=${encodeURIComponent(launch.name)}`,
      {
        Image: launch.image,
        ...(launch.entrypoint ? { Entrypoint: launch.entrypoint } : {}),
        ...(launch.cmd ? { Cmd: launch.cmd } : launch.entrypoint ? { Cmd: [] } : {}),
        Env: launch.env,
        ...(launch.workingDir ? { WorkingDir: launch.workingDir } : {}),
        ...(launch.user ? { User: launch.user } : {}),
        Labels: launch.labels,
        HostConfig: {
          NetworkMode: 'host',
          Binds: launch.binds,
          ...(launch.memoryBytes
            ? { Memory: Math.floor(launch.memoryBytes), MemorySwap: Math.floor(launch.memoryBytes) }
            : {}),
          ...(launch.cpus ? { NanoCpus: Math.round(launch.cpus * 1e9) } : {}),
          ...(launch.capDrop?.length ? { CapDrop: launch.capDrop } : {}),
          ...(launch.capAdd?.length ? { CapAdd: launch.capAdd } : {}),
          SecurityOpt: [
            ...(launch.noNewPrivileges ? ['no-new-privileges'] : []),
            ...(launch.seccompUnconfined ? ['seccomp=unconfined'] : []),
          ],
          ReadonlyRootfs: launch.readOnlyRootfs ?? false,
          Privileged: launch.privileged ?? false,
        },
      },
    );
    return body.Id;
  }

  async start(id: string): Promise<string> {
    await this.client.call('POST', `/containers/${id}/start`);
    const { body } = await this.client.call<{ State: { StartedAt: string } }>('GET', `/containers/${id}/json`);
    return body.State.StartedAt;
  }

  /** Resolves when the container exits, with what the engine says of its end. */
  async wait(id: string): Promise<ContainerEnd> {
    await this.client.call('POST', `/containers/${id}/wait`, undefined, {}, [404]);
    const { body } = await this.client.call<{
      State: { ExitCode: number; OOMKilled: boolean; StartedAt: string; FinishedAt: string };
    }>('GET', `/containers/${id}/json`);
    return {
      exitCode: body.State.ExitCode,
      oomKilled: body.State.OOMKilled,
      startedAt: body.State.StartedAt,
      finishedAt: body.State.FinishedAt,
    };
  }

  /** SIGTERM, then SIGKILL after the grace period (a pod's terminationGracePeriodSeconds). */
  async stop(id: string, graceSeconds: number): Promise<void> {
    await this.client
      .call('POST', `/containers/${id}/stop?t=${Math.max(0, Math.floor(graceSeconds))}`, undefined, {}, [304, 404, 409])
      .catch(() => undefined);
  }

  async remove(id: string): Promise<void> {
    await this.client
      .call('DELETE', `/containers/${id}?force=true&v=true`, undefined, {}, [404, 409])
      .catch(() => undefined);
  }

  /** The container's output (stdout and stderr interleaved, as kubelet's log is), followed or not. */
  async logs(
    id: string,
    options: { follow: boolean; tailLines?: number; timestamps?: boolean },
  ): Promise<Readable & { destroy(): void }> {
    const query = new URLSearchParams({ stdout: '1', stderr: '1', follow: options.follow ? '1' : '0' });
    if (options.tailLines !== undefined) query.set('tail', String(options.tailLines));
    if (options.timestamps) query.set('timestamps', '1');
    const response = await this.client.stream('GET', `/containers/${id}/logs?${query}`);
    const { PassThrough } = await import('node:stream');
    const output = new PassThrough();
    demultiplex(
      response,
      (chunk) => output.write(chunk),
      (chunk) => output.write(chunk),
    );
    response.on('end', () => output.end());
    response.on('error', (error) => output.destroy(error));
    output.on('close', () => response.destroy());
    return output;
  }

  /** The containers of one double (by its id), or of every double, to remove what a crashed test left. */
  async labelled(value?: string): Promise<string[]> {
    return (await this.listLabelled(value)).map((container) => container.Id);
  }

  /**
   * Removes the containers of doubles whose process is gone (a test killed before its double could stop): each
   * container names its double's process (DOUBLE_PID_LABEL).
   */
  async removeOrphans(): Promise<void> {
    for (const container of await this.listLabelled()) {
      const pid = Number(container.Labels?.[DOUBLE_PID_LABEL]);
      if (pid && !processAlive(pid)) await this.remove(container.Id);
    }
  }

  private async listLabelled(value?: string): Promise<Array<{ Id: string; Labels: Record<string, string> | null }>> {
    const filters = JSON.stringify({ label: [value ? `${DOUBLE_LABEL}=${value}` : DOUBLE_LABEL] });
    const { body } = await this.client.call<Array<{ Id: string; Labels: Record<string, string> | null }>>(
      'GET',
      `/containers/json?all=true&filters=${encodeURIComponent(filters)}`,
    );
    return body;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
