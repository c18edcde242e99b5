/** A user and group id on the host. */
export interface RunUser {
  uid: number;
  gid: number;
}

/**
 * How a harness process is confined, resolved once at start (`resolveSandboxMode`). `bwrap` (bubblewrap) gives the
 * run a read-only system, a writable workspace only, its own PID namespace and, when network is allowed, a network
 * namespace of its own whose egress goes through pasta (never the host's loopback or private addresses);
 * `process` is only a process group in the workspace, for machines without bubblewrap, and is not confined.
 */
export interface SandboxMode {
  kind: 'bwrap' | 'process' | 'container';
  /**
   * Who runs run code on the host: set when the server is root (HANGAR_RUN_USER, 64000 by default); undefined
   * means the server's own user.
   */
  runAs: RunUser | undefined;
  /** Hangar's API as runs reach it (HANGAR_API_URL): the one host destination a networked run may still reach. */
  apiUrl: () => string | undefined;
  /**
   * Existing paths under /tmp or /run that every bwrap sandbox still sees, read-only (HANGAR_SANDBOX_READ_ONLY_PATHS):
   * the sandbox's /tmp and /run are otherwise empty.
   */
  readOnlyPaths?: string[];
  /**
   * A sandbox that holds something per execution (the container sandbox's container): opened before the
   * environment is set up, every process of the execution runs in it, closed when its workspace is removed.
   * Undefined for bwrap and process, whose processes each stand alone.
   */
  executions?: ExecutionSandboxes;
}

/** What an execution's sandbox is made from. */
export interface SandboxOpenRequest {
  /** The execution's workspace (its directory name says whose: `<run id>.<execution id>`). */
  workspace: string;
  /** The environment's image; undefined takes the operator's default. */
  image: string | undefined;
  /** Whether any process of the execution (setup or harness) asks for network. */
  network: boolean;
  /** The environment's limit requests (memory, cpus, pids); each missing one is the operator's default. */
  limits?: { memory?: string; cpus?: number; pids?: number };
  /** Credentials for the image's registry (from a team secret), never logged. */
  registryAuth?: { username: string; password: string; serveraddress?: string };
  /** Records a timeline event of the preparation (an image pull's progress and time). */
  report: (type: string, payload: Record<string, unknown>) => Promise<void>;
}

export type SandboxOpenResult = { ok: true; details: Record<string, unknown> } | { ok: false; message: string };

export interface ExecutionSandboxes {
  open(request: SandboxOpenRequest): Promise<SandboxOpenResult>;
  /** Ends the execution's sandbox and everything running in it; nothing happens when there is none. */
  close(workspace: string): Promise<void>;
  /**
   * Where a sandbox outlives its processes (a container): stops everything in it from running and detaches it from
   * the workspace, so that a new one can be opened for it at once; the old one is removed later (at the latest with
   * close). Without it, close.
   */
  retire?(workspace: string): Promise<void>;
  /** Resolves once no removal this backend does in the background is in progress. */
  settled?(): Promise<void>;
  /**
   * Removes the sandboxes of executions this replica's workspace root holds that are not in `keep` and that `inUse`
   * (the database's judgement) does not name; without `inUse`, every one not in `keep`.
   */
  removeUnused(
    keep: Set<string>,
    inUse?: (executions: Array<{ runId: string; executionId: number }>) => Promise<Set<string>>,
  ): Promise<number>;
  spawn(options: SandboxSpawnOptions): SandboxedProcess;
}

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
