import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type {
  RunUser,
  SandboxBackend,
  SandboxCapabilities,
  SandboxedProcess,
  SandboxOpenRequest,
  SandboxOpenResult,
  SandboxSpawnOptions,
} from '../backend.js';
import { realPath } from '../host-process.js';
import { apiRoute } from '../network.js';
import {
  ApiSocket,
  loopbackApi,
  type RelayListener,
  relayListeners,
  socketBase,
  socketBinds,
  startRelay,
} from './api-relay.js';
import { limitPassed } from './cgroup-counters.js';
import { ContainerRules } from './egress.js';
import { EgressSockets } from './egress-sockets.js';
import { EngineClient, EngineError } from './engine-client.js';
import { spawnInContainer } from './exec.js';
import { HostPaths } from './host-paths.js';
import { LABEL_EXECUTION, LABEL_ROOT, leftoverContainers } from './leftovers.js';
import { type ContainerLimits, limitsPayload, runLimits } from './limits.js';
import { CONTAINER_WORKSPACE, containerPath, RUNTIME_BIN, setsidPath, translate } from './paths.js';
import { ContainerPhaseNetwork } from './phase-network.js';
import { ImageAccess, registryOf } from './pull.js';
import { SnapshotImages } from './snapshot-images.js';

export interface ContainerBackendOptions {
  dockerHost: string;
  defaultImage: string;
  limits: ContainerLimits;
  /** The most an environment's request gets (HANGAR_RUN_*_MAX). */
  maximums: ContainerLimits;
  /** Who runs inside (the workspace's owner); never root. */
  user: RunUser;
  /** The run user of a root server (the workspaces' owner on the host); undefined: the server's own user. */
  runAs?: RunUser;
  /** The workspace root: containers are labelled with it, and a replica only ever removes its own root's. */
  workspaceRoot: string;
  /** Host files and directories harnesses need (Hangar's dist and node_modules, agent CLIs), bound read-only at the same path. */
  runtimePaths: string[];
  /** Hangar's API as runs reach it (HANGAR_API_URL): relayed into every container when it is on loopback. */
  apiUrl?: () => string | undefined;
}

interface OpenContainer {
  id: string;
  workspace: string;
  /** The OOM kills and pids-limit refusals counted so far: a rise after a failed exit says which limit it hit. */
  counters: { oom: number; pids: number };
  /** The limits this container got. */
  limits: ContainerLimits;
  /** The execution's API socket on the host and the output of the relay in the container, when the API is relayed. */
  apiSocket?: ApiSocket;
  relay?: Readable;
  /** Resolves once the relay listens (at once when the API is not relayed); rejects when it could not start. */
  relayReady: Promise<void>;
  /** The execution's way to the egress proxy when a phase has an allow list. */
  egress?: EgressSockets;
  /** A networked container's rules and egress sockets, phase by phase. */
  network?: ContainerPhaseNetwork;
}

/**
 * The container sandbox: one container per execution, from the environment's image (or a setup snapshot's), created
 * before setup and removed with the workspace; a cold start's snapshot replaces it by one of the image it committed.
 * Each setup command and the harness run in it as execs, so what setup installs is there for the agent. The container
 * runs as the workspace's owner with every capability dropped, no-new-privileges, the engine's default seccomp
 * profile, its limits, and no network unless the execution asks for it.
 */
export class ContainerBackend implements SandboxBackend {
  readonly kind = 'container';
  readonly capabilities: SandboxCapabilities = {
    perExecution: true,
    isolated: true,
    workspacePath: CONTAINER_WORKSPACE,
    workspaceFiles: 'host-directory',
    copiesUnreachableFiles: false,
    snapshot: 'files-and-image',
    egressProxy: true,
  };
  readonly client: EngineClient;
  readonly runAs: RunUser | undefined;
  private readonly containers = new Map<string, OpenContainer>();
  /** Containers retired from their workspace (paused) while their execution goes on in a new one, by workspace. */
  private readonly retired = new Map<string, string[]>();
  /** Removals of retired containers in progress. */
  private readonly removals = new Set<Promise<void>>();
  private readonly rootLabel: string;
  /** Which image each execution may start from, checked with the registry as needed (issue 47.2). */
  private readonly images: ImageAccess;
  /** Bind sources as the engine names them: through the server's own container when the server runs in one. */
  private readonly hostPaths: HostPaths;
  /** The API sockets of this server's containers: a directory only the server enters (each socket is bound alone). */
  private socketDirectory: string | undefined;

  constructor(private readonly options: ContainerBackendOptions) {
    this.client = new EngineClient(options.dockerHost);
    this.runAs = options.runAs;
    this.rootLabel = realPath(options.workspaceRoot);
    this.images = new ImageAccess(this.client, options.defaultImage);
    this.hostPaths = new HostPaths(this.client);
  }

  /** Setup snapshots' images: this root's execution containers, committed after setup. */
  imageSnapshots(): SnapshotImages {
    return new SnapshotImages(
      this.client,
      { name: LABEL_ROOT, value: this.rootLabel },
      (workspace) => this.containers.get(realPath(workspace))?.id || undefined,
      this.options.defaultImage,
    );
  }

  async open(request: SandboxOpenRequest): Promise<SandboxOpenResult> {
    const image = request.image ?? this.options.defaultImage;
    const workspace = realPath(request.workspace);
    const name = path.basename(workspace);
    const { limits, lowered } = runLimits(this.options.limits, this.options.maximums, request.limits);
    let imageId: string;
    try {
      const auth = request.registryAuth && { serveraddress: registryOf(request.image ?? ''), ...request.registryAuth };
      imageId = await this.images.resolve(image, auth, request.report);
    } catch (error) {
      return { ok: false, message: `Could not pull the image ${image}: ${(error as Error).message}` };
    }
    // The execution's own name; a container opened after a retired one (which still holds that name until removed)
    // gets a suffix.
    const containerName =
      `hangar-${hash(this.rootLabel)}-${name.replace(/[^a-zA-Z0-9_.-]/g, '_')}` +
      (this.retired.has(workspace) ? `-${randomBytes(4).toString('hex')}` : '');
    const apiUrl = this.options.apiUrl?.();
    const relayed = loopbackApi(apiUrl);
    const open: OpenContainer = {
      id: '',
      workspace,
      counters: { oom: 0, pids: 0 },
      limits,
      relayReady: Promise.resolve(),
    };
    this.containers.set(workspace, open);
    // A phase with an allow list reaches the egress proxy through sockets of its own, relayed like the API.
    const proxied = request.network && request.proxied === true;
    try {
      const sockets = socketBase(this.sockets(), containerName);
      if (relayed) open.apiSocket = await ApiSocket.listen(`${sockets}.sock`, relayed.host, relayed.port);
      if (proxied) open.egress = await EgressSockets.listen(sockets);
      // By ID: what was checked is what runs, whatever a pull of the same name meanwhile did to it.
      const binds = socketBinds(open.apiSocket, open.egress);
      open.id = await this.create(imageId, workspace, containerName, name, request.network, limits, binds);
      await this.client.call('POST', `/containers/${open.id}/start`);
      // Before anything of the run executes: its network is filtered, and the API is on its loopback.
      if (request.network) {
        const rules = await ContainerRules.of(this.client, open.id, await apiRoute(apiUrl));
        open.network = await ContainerPhaseNetwork.confine(rules, open.egress);
      }
      const listeners = relayListeners(relayed?.port, open.egress);
      if (listeners.length > 0) open.relayReady = this.relay(open, listeners);
    } catch (error) {
      await this.close(workspace);
      return { ok: false, message: `Could not start a container from the image ${image}: ${(error as Error).message}` };
    }
    // Not awaited: the container it replaces is no longer in the execution's way.
    void this.removeRetired(workspace);
    return {
      ok: true,
      details: {
        image,
        network: request.network,
        ...(request.network ? { egress: proxied ? 'filtered, allow lists through the egress proxy' : 'filtered' } : {}),
        ...(relayed ? { api: 'relayed' } : {}),
        limits: {
          ...limitsPayload(limits),
          ...(request.limits ? { requested: request.limits } : {}),
          ...(lowered.length > 0 ? { lowered_to_maximum: lowered } : {}),
        },
      },
    };
  }

  /**
   * Starts the API relay in an open container. Not awaited by open: its start (a node in the container) goes on
   * while the execution prepares, and each process of the run waits for it before it starts (spawn), so none finds
   * the API missing; one that cannot start fails the run's first process, saying why.
   */
  private relay(open: OpenContainer, listeners: RelayListener[]): Promise<void> {
    const ready = startRelay(this.client, open.id, `${RUNTIME_BIN}/node`, listeners).then((relay) => {
      open.relay = relay;
      // Closed meanwhile: its container's removal ends the relay; its output stream goes now.
      if (this.containers.get(open.workspace) !== open) relay.destroy();
    });
    ready.catch(() => undefined);
    return ready;
  }

  /** The server's private directory of API sockets, made on first use. */
  private sockets(): string {
    this.socketDirectory ??= fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-api-sockets-'));
    return this.socketDirectory;
  }

  private async create(
    image: string,
    workspace: string,
    containerName: string,
    name: string,
    network: boolean,
    limits: ContainerLimits,
    /** The execution's own sockets (the API's, the egress proxy's), as host:container:ro binds. */
    socketBinds: string[],
  ): Promise<string> {
    const { user } = this.options;
    const body = {
      Image: image,
      // The container only has to stay up; setup and the harness are execs. The image's own entrypoint is not run.
      Entrypoint: ['sleep'],
      Cmd: ['infinity'],
      User: `${user.uid}:${user.gid}`,
      WorkingDir: CONTAINER_WORKSPACE,
      Labels: { [LABEL_EXECUTION]: name, [LABEL_ROOT]: this.rootLabel },
      NetworkDisabled: !network,
      HostConfig: {
        Binds: await this.hostPaths.binds([
          `${workspace}:${CONTAINER_WORKSPACE}:rw`,
          `${process.execPath}:${RUNTIME_BIN}/node:ro`,
          `${setsidPath()}:${RUNTIME_BIN}/setsid:ro`,
          ...this.options.runtimePaths.map((runtime) => `${runtime}:${runtime}:ro`),
          ...socketBinds,
        ]),
        NetworkMode: network ? 'bridge' : 'none',
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Memory: limits.memoryBytes,
        MemorySwap: limits.memoryBytes,
        NanoCpus: Math.round(limits.cpus * 1e9),
        PidsLimit: limits.pids,
        // An init reaps what the run's processes leave behind.
        Init: true,
      },
    };
    const create = () =>
      this.client.call<{ Id: string }>('POST', `/containers/create?name=${encodeURIComponent(containerName)}`, body);
    try {
      return (await create()).body.Id;
    } catch (error) {
      // A leftover of the same execution (its engine died before removing it) is replaced.
      if (!(error instanceof EngineError) || error.status !== 409) throw error;
      await this.remove(containerName);
      return (await create()).body.Id;
    }
  }

  spawn(options: SandboxSpawnOptions): SandboxedProcess {
    const open = this.containerOf(options.cwd);
    if (!open) {
      return spawnInContainer(options, {
        client: this.client,
        containerId: 'none',
        argv: [],
        cwd: '/',
        env: [],
        limitPassed: async () => undefined,
      });
    }
    const inside = (value: string) => translate(value, open.workspace);
    const env = Object.entries({
      ...options.env,
      ...ContainerPhaseNetwork.variables(options),
      PATH: containerPath(options.env.PATH, this.options.runtimePaths),
    }).map(([key, value]) => `${key}=${inside(value)}`);
    return spawnInContainer(options, {
      client: this.client,
      containerId: open.id,
      // The server's own node is Hangar's node in the container.
      argv: options.argv.map((arg, index) =>
        index === 0 && arg === process.execPath ? `${RUNTIME_BIN}/node` : inside(arg),
      ),
      cwd: inside(realPath(options.cwd)),
      env,
      // The relay listens, and the container has this process's phase's network.
      ready: Promise.all([open.relayReady, open.network?.enter(options)]).then(() => undefined),
      limitPassed: async () => {
        const passed = await limitPassed(this.client, open.id, open.counters, open.limits);
        open.counters = passed.counters;
        return passed.exceeded;
      },
    });
  }

  private containerOf(cwd: string): OpenContainer | undefined {
    const directory = realPath(cwd);
    for (const open of this.containers.values())
      if (directory === open.workspace || directory.startsWith(`${open.workspace}/`)) return open;
    return undefined;
  }

  async close(workspace: string): Promise<void> {
    const key = realPath(workspace);
    const open = this.detach(key);
    await Promise.all([open?.id ? this.remove(open.id) : undefined, this.removeRetired(key)]);
  }

  /** Takes a workspace's container out of the map and ends its relay and API socket; the container itself stays. */
  private detach(workspace: string): OpenContainer | undefined {
    const open = this.containers.get(workspace);
    if (!open) return undefined;
    this.containers.delete(workspace);
    open.relay?.destroy();
    open.apiSocket?.close();
    open.egress?.close();
    return open;
  }

  /**
   * Freezes the workspace's container (the engine's pause: nothing in it runs any more, so nothing writes into the
   * workspace) and detaches it, so that the execution can open a new one at once; the retired container is removed
   * once that one is open (or failed to open), at close, or now when the engine cannot pause it. A removal's kill
   * reaches the frozen processes before they are thawed: they never run again.
   */
  async retire(workspace: string): Promise<void> {
    const key = realPath(workspace);
    const open = this.detach(key);
    if (!open?.id) return;
    try {
      await this.client.call('POST', `/containers/${open.id}/pause`);
    } catch {
      await this.remove(open.id);
      return;
    }
    this.retired.set(key, [...(this.retired.get(key) ?? []), open.id]);
  }

  /** Removes the workspace's retired containers; resolves when they are gone. */
  private removeRetired(workspace: string): Promise<void> {
    const ids = this.retired.get(workspace);
    if (!ids) return Promise.resolve();
    this.retired.delete(workspace);
    const removal = Promise.all(ids.map((id) => this.remove(id).catch(() => undefined))).then(() => undefined);
    this.removals.add(removal);
    void removal.finally(() => this.removals.delete(removal));
    return removal;
  }

  /** Resolves once no retired container is being removed (for whoever must not overlap with it: a benchmark). */
  async settled(): Promise<void> {
    while (this.removals.size > 0) await Promise.all(this.removals);
  }

  /** Kills and removes a container; one already gone is fine. */
  private async remove(idOrName: string): Promise<void> {
    await this.client.call(
      'DELETE',
      `/containers/${encodeURIComponent(idOrName)}?force=true&v=true`,
      undefined,
      {},
      [404],
    );
  }

  async removeUnused(
    keep: Set<string>,
    inUse?: (executions: Array<{ runId: string; executionId: number }>) => Promise<Set<string>>,
  ): Promise<number> {
    const open = new Set([
      ...[...this.containers.values()].map((container) => container.id),
      ...[...this.retired.values()].flat(),
    ]);
    const candidates = await leftoverContainers(this.client, this.rootLabel, keep, open);
    if (candidates.length === 0) return 0;
    const used = inUse ? await inUse(candidates) : new Set<string>();
    let removed = 0;
    for (const candidate of candidates) {
      if (used.has(candidate.name)) continue;
      await this.remove(candidate.id).then(
        () => removed++,
        () => undefined,
      );
    }
    return removed;
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}
