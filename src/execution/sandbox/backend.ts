import { withWorkspaceNetwork } from '../../network/index.js';

/** A user and group id on the host. */
export interface RunUser {
  uid: number;
  gid: number;
}

/** The backends, by name. Only sandbox/mode.ts turns one into a backend or compares them (scripts/check-sandbox-kinds.mjs). */
export type SandboxKind = 'bwrap' | 'process' | 'container' | 'kubernetes';

/**
 * What a backend can do, as data: callers ask these instead of checking which backend they have.
 */
export interface SandboxCapabilities {
  /**
   * Each execution has a sandbox of its own (a container), opened before setup (`open`) and closed with its workspace;
   * every process of the execution runs in it. Without, each process stands alone and `open` has nothing to make.
   */
  perExecution: boolean;
  /** Whether run code is confined at all (process mode is not: it can reach what the server can). */
  isolated: boolean;
  /** Where the run sees its workspace: at its own host path, or at this path inside the sandbox. */
  workspacePath: 'host' | string;
  /**
   * How files reach the workspace: `host-directory`, a directory on the server's own file system that the server
   * writes through handle-relative, no-follow operations (workspace/files.ts) and the sandbox binds.
   */
  workspaceFiles: 'host-directory';
  /**
   * An operator's harness file the run user cannot reach is shown to the sandbox as a read-only copy at its path
   * (bwrap); elsewhere a run that needs it fails.
   */
  copiesUnreachableFiles: boolean;
  /**
   * What a setup snapshot keeps: the workspace's files, or those and the sandbox's own file system committed as an
   * image (`imageSnapshots`), which holds what setup installed outside the workspace.
   */
  snapshot: 'files' | 'files-and-image';
  /**
   * A networked process can be confined to a lease of Hangar's egress proxy (SandboxSpawnOptions.egress): its only way
   * out, with DNS only from the proxy's resolver (bwrap's pasta and nft rules; a container's rules and its relay to
   * the proxy, phase by phase). Elsewhere an environment's allow list leaves its phase without network
   * (docs/sandbox.md#allow-lists).
   */
  egressProxy: boolean;
}

/**
 * The one sandbox port: every backend (sandbox/bwrap/, sandbox/process/, sandbox/container/) implements it, and
 * sandbox/mode.ts alone chooses one, once at start (`resolveSandboxMode`). bwrap (bubblewrap) gives the run a
 * read-only system, a writable workspace only, its own PID namespace and, when network is allowed, a network
 * namespace of its own whose egress goes through pasta (never the host's loopback or private addresses); `process` is
 * only a process group in the workspace, for machines without bubblewrap, and is not confined; `container` runs each
 * execution in a container of its environment's image. Every process's life is sandbox/process-tree.ts's.
 */
export interface SandboxBackend {
  /** Which backend this is, for what it reports (the start summary, the timeline, snapshot keys). Never compared. */
  readonly kind: SandboxKind;
  readonly capabilities: SandboxCapabilities;
  /**
   * Who runs run code on the host: set when the server is root (HANGAR_RUN_USER, 64000 by default); undefined
   * means the server's own user.
   */
  readonly runAs: RunUser | undefined;
  /** Starts a process in the sandbox; `exited` resolves (never rejects) once nothing of its tree is left. */
  spawn(options: SandboxSpawnOptions): SandboxedProcess;
  /** Opens the execution's sandbox (capabilities.perExecution); otherwise ok at once, with nothing to report. */
  open(request: SandboxOpenRequest): Promise<SandboxOpenResult>;
  /** Ends the execution's sandbox and everything running in it; nothing happens when there is none. */
  close(workspace: string): Promise<void>;
  /**
   * Where a sandbox outlives its processes (a container): stops everything in it from running and detaches it from
   * the workspace, so that a new one can be opened for it at once; the old one is removed later (at the latest with
   * close). Elsewhere the same as close.
   */
  retire(workspace: string): Promise<void>;
  /** Resolves once no removal this backend does in the background is in progress. */
  settled(): Promise<void>;
  /**
   * Removes the sandboxes of executions this replica's workspace root holds that are not in `keep` and that `inUse`
   * (the database's judgement) does not name; without `inUse`, every one not in `keep`. Returns how many it removed.
   */
  removeUnused(
    keep: Set<string>,
    inUse?: (executions: Array<{ runId: string; executionId: number }>) => Promise<Set<string>>,
  ): Promise<number>;
  /** The image half of setup snapshots (capabilities.snapshot `files-and-image`); undefined otherwise. */
  imageSnapshots(): SandboxImageSnapshots | undefined;
}

/** The name the callers of the port have always used for it. */
export type SandboxMode = SandboxBackend;

/** Starts a process in the sandbox its options name: the one entry for setup, harnesses and Hangar's own commands. */
export function spawnSandboxed(options: SandboxSpawnOptions): SandboxedProcess {
  if (options.argv[0] === undefined) throw new Error('spawnSandboxed: argv is empty');
  // The execution's phase decides its network (an environment's allow list), within what the caller allows.
  return options.mode.spawn(withWorkspaceNetwork(options));
}

/**
 * A setup snapshot's image, committed from the execution's sandbox after setup (container/snapshot-images.ts).
 */
export interface SandboxImageSnapshots {
  /** The image a warm start's sandbox opens from. */
  reference(id: string): string;
  /** The engine's id of an image (the environment's, or the default); undefined when it is not there. */
  imageId(image: string | undefined): Promise<string | undefined>;
  has(id: string): Promise<boolean>;
  /** Commits the workspace's sandbox as the snapshot `id`'s image; returns the size of the layer it adds. */
  commit(workspace: string, id: string): Promise<number>;
  /** How many layers a snapshot's image has above `base` (an image id). */
  layersAbove(id: string, base: string): Promise<number>;
  remove(id: string): Promise<void>;
  /** The snapshot ids whose images this workspace root's engine holds. */
  list(): Promise<string[]>;
}

/** What an execution's sandbox is made from. */
export interface SandboxOpenRequest {
  /** The execution's workspace (its directory name says whose: `<run id>.<execution id>`). */
  workspace: string;
  /** The environment's image; undefined takes the operator's default. */
  image: string | undefined;
  /** Whether any process of the execution (setup or harness) asks for network. */
  network: boolean;
  /**
   * Whether a phase's network is an allow list (through the egress proxy): the sandbox then prepares a way to the
   * proxy that each phase's processes get as they start (their SandboxSpawnOptions.egress).
   */
  proxied?: boolean;
  /** The environment's limit requests (memory, cpus, pids); each missing one is the operator's default. */
  limits?: { memory?: string; cpus?: number; pids?: number };
  /** Credentials for the image's registry (from a team secret), never logged; `serveraddress` defaults to the image's. */
  registryAuth?: { username: string; password: string; serveraddress?: string };
  /** Records a timeline event of the preparation (an image pull's progress and time). */
  report: (type: string, payload: Record<string, unknown>) => Promise<void>;
}

export type SandboxOpenResult = { ok: true; details: Record<string, unknown> } | { ok: false; message: string };

export interface SandboxSpawnOptions {
  mode: SandboxMode;
  argv: string[];
  /** The workspace: the working directory, and under bwrap the only writable path. */
  cwd: string;
  /** The complete environment of the process (the caller builds it with `scrubbedEnvironment`). */
  env: Record<string, string>;
  /** Paths the process must not see at all (bwrap hides them under an empty tmpfs), e.g. the data directory. */
  hiddenPaths: string[];
  /** Network to the outside (model providers, git hosts) through the sandbox's own egress; otherwise none. */
  allowNetwork: boolean;
  /**
   * With network, only through Hangar's egress proxy (issue 51): a lease's ports on the server's loopback. The
   * sandbox reaches the proxy and its resolver there and nothing else; the proxy variables point at it.
   */
  egress?: { proxyPort: number; dnsPort: number };
  /** Wall-clock limit: the whole process tree is killed when it passes. */
  timeoutMs: number;
  /** Bytes of stdout, and separately of stderr, kept; beyond this the rest is dropped and `outputTruncated` set. */
  maxOutputBytes: number;
  /** Keep stdin open for writing (harnesses that accept input while running); otherwise it is closed at once. */
  keepStdinOpen: boolean;
  /**
   * The operator's own command and files (a configured harness's command, a CLI's path): under bwrap, those that live
   * under /tmp or /run stay visible, read-only (commandFileBinds). Never a path an API caller or a run chose.
   */
  operatorFiles?: string[];
  /** Written to stdin first. */
  stdinText?: string;
}

export interface SandboxExit {
  /** Exit code, or null when the process ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Ended because the wall-clock limit passed. */
  timedOut: boolean;
  /** Ended because `kill()` was called. */
  killed: boolean;
  outputTruncated: boolean;
  /** A limit of the sandbox that ended the process, said for its owner (e.g. "exceeded its memory limit of 2 GiB"). */
  limitExceeded?: string;
}

export interface SandboxedProcess {
  pid: number;
  /** Each complete line of stdout (without the newline) as it arrives. Set before output starts flowing. */
  onStdoutLine(listener: (line: string) => void): void;
  onStderrLine(listener: (line: string) => void): void;
  /** Writes to stdin; false when stdin is closed or the process has ended. */
  write(text: string): boolean;
  /** Resolves when the process and every process it started are gone. */
  exited: Promise<SandboxExit>;
  /** Ends the whole process tree: SIGTERM, then SIGKILL after `graceMs`. Resolves when it is gone. */
  kill(graceMs?: number): Promise<SandboxExit>;
}
