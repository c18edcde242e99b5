import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { WebSocket } from 'ws';
import type { DB } from '../database.js';
import type { TaskTokens } from '../execution/index.js';
import {
  conversationHistory,
  type EnvironmentSetups,
  runAttachments,
  runVariables,
  TakebackLoop,
  usageBefore,
} from '../execution/index.js';
import type { GitHubAccess } from '../github/index.js';
import type { ResolvedDefinition } from '../mcp/index.js';
import type { Bus } from '../platform/bus.js';
import { PollingLoop } from '../platform/loop.js';
import { type ClaimedRun, leaseRenewalIntervalMs, type RunLifecycle } from '../runs/index.js';
import { WorkerGitHubTokens } from './github-tokens.js';
import type { WorkerCredential } from './keys/authenticate.js';
import { activeWorkerKeyUids } from './keys/store.js';
import type { TaskAssignment } from './protocol.js';
import { WorkerSession } from './session.js';
import * as store from './store.js';
import { WorkerTasks } from './tasks.js';

export interface WorkerHubOptions {
  db: Kysely<DB>;
  /** Every write of the runs the workers hold. */
  lifecycle: RunLifecycle;
  bus: Bus;
  log: FastifyBaseLogger;
  environments: EnvironmentSetups;
  tokens: TaskTokens;
  apiUrl: () => string;
  readSecret: (teamUid: string, name: string) => Promise<string | null>;
  /** A registered MCP server as a run of the team starts it (secrets filled in); throws when it cannot be used. */
  mcpServer: (teamUid: string, uid: string) => Promise<ResolvedDefinition>;
  /** The GitHub tokens of the workers' executions are minted here (the App's key stays in the server). */
  github?: GitHubAccess;
  /** GitHub's API (HANGAR_GITHUB_API_URL), where a worker revokes its execution's tokens. */
  githubApiUrl?: string;
  leaseSeconds: number;
  /** Pings go out this often; a connection silent for twice as long is closed. */
  heartbeatSeconds: number;
  /** Longest wait between looks at the workers' queues when no notification arrives. */
  pollIntervalMs?: number;
}

/**
 * The worker connections of one replica. It offers each connected worker the queued runs that name it (woken by
 * NOTIFY when a run is queued on any replica), keeps the leases of the runs its connections hold, sends cancels
 * to them, and keeps their presence rows fresh. Replicas share nothing but the database: a run is claimed by one
 * replica's hub with SKIP LOCKED, and any connection of the worker may act on it afterwards.
 */
export class WorkerHub {
  private readonly sessions = new Map<string, Set<WorkerSession>>();
  private readonly replica = `replica-${randomUUID()}`;
  private readonly tasks: WorkerTasks;
  private readonly githubTokens: WorkerGitHubTokens;
  /** Offers queued runs to the connected workers: woken when runs are queued or capacity frees, polling besides. */
  private readonly dispatching: PollingLoop;
  /** Periodic chores: lease renewal, heartbeats. */
  private readonly chores: PollingLoop[];
  /** Runs of workers that never came back (to any replica) end once their lease passes, engine or not. */
  private readonly takingBack: TakebackLoop;

  constructor(private readonly options: WorkerHubOptions) {
    const { log, leaseSeconds, heartbeatSeconds } = options;
    this.githubTokens = new WorkerGitHubTokens({
      db: options.db,
      github: options.github,
      apiUrl: options.githubApiUrl ?? 'https://api.github.com',
      environments: options.environments,
    });
    this.tasks = new WorkerTasks({
      db: options.db,
      lifecycle: options.lifecycle,
      log,
      environments: options.environments,
      github: this.githubTokens,
      onFreed: () => this.poke(),
      // Twice the lease, as the engine's own writes: a worker's end still lands when the database comes back just
      // after the lease ran out (the run is only taken back once a reaper can reach the database too).
      retryForMs: 2 * leaseSeconds * 1000,
    });
    this.dispatching = new PollingLoop({
      intervalMs: options.pollIntervalMs ?? 2000,
      pass: () => this.dispatch(),
      onError: (error) => log.error({ err: error }, 'worker dispatch failed'),
    });
    const chore = (intervalMs: number, pass: () => Promise<void>, failure: string) =>
      new PollingLoop({ intervalMs, waitFirst: true, pass, onError: (error) => log.warn({ err: error }, failure) });
    this.chores = [
      chore(leaseRenewalIntervalMs(leaseSeconds), () => this.renewLeases(), 'worker lease renewal failed'),
      chore(
        leaseRenewalIntervalMs(leaseSeconds),
        () => this.githubTokens.sweep(),
        "revoking the GitHub tokens of workers' ended executions failed",
      ),
      chore(heartbeatSeconds * 1000, () => this.heartbeat(), 'worker heartbeat failed'),
    ];
    this.takingBack = new TakebackLoop({
      lifecycle: options.lifecycle,
      leaseSeconds,
      log,
      onTakenBack: () => options.bus.announceDispatch(),
    });
  }

  async start(): Promise<void> {
    const { bus } = this.options;
    await bus.onDispatch(() => this.poke());
    await bus.onRunControl((action, runId) => {
      if (action === 'cancel') this.cancel(runId, 'the run was cancelled');
      else if (action === 'agent') this.announceFollowups(runId);
    });
    for (const loop of [this.dispatching, ...this.chores]) loop.start();
    this.takingBack.start();
  }

  async stop(): Promise<void> {
    const loops = Promise.all([this.dispatching, ...this.chores, this.takingBack].map((loop) => loop.stop()));
    for (const session of this.allSessions()) session.socket.close(1001, 'server shutting down');
    await loops;
    await this.tasks.settled();
  }

  /** A worker connected (its key checked for this worker ID): it gets offers once it says how many tasks it takes. */
  async attach(socket: WebSocket, credential: WorkerCredential, workerHost: string): Promise<void> {
    const teamUid = credential.teamUid;
    const session = new WorkerSession(socket, teamUid, workerHost, credential.keyUid);
    let set = this.sessions.get(session.owner);
    if (!set) {
      set = new Set();
      this.sessions.set(session.owner, set);
    }
    set.add(session);
    socket.on('pong', () => (session.lastSeen = Date.now()));
    socket.on('message', (data, isBinary) => {
      session.lastSeen = Date.now();
      if (!isBinary) this.tasks.handle(session, data.toString());
    });
    socket.on('close', () => void this.detach(session));
    socket.on('error', (error) => this.options.log.warn({ err: error, workerHost }, 'worker connection failed'));
    await store
      .insertConnection(this.options.db, {
        id: session.id,
        team_uid: teamUid,
        worker_host: workerHost,
        replica: this.replica,
      })
      .catch((error) => {
        this.options.log.error({ err: error, workerHost }, 'could not record a worker connection');
        socket.close(1011, 'server error');
      });
    this.options.log.info({ workerHost, connection: session.id }, 'worker connected');
  }

  /**
   * A run pod connected with its execution credential (docs/kubernetes.md): it gets its one execution, under the
   * lease of whoever created its Job, and nothing else. An execution that has ended closes the connection, so the
   * pod's worker stops.
   */
  async attachExecution(socket: WebSocket, execution: { runId: string; executionId: number }): Promise<void> {
    const run = await store.heldExecution(this.options.db, execution.runId, execution.executionId).catch((error) => {
      this.options.log.error({ err: error, runId: execution.runId }, 'could not read a run pod execution');
      return null;
    });
    if (run === null) {
      socket.close(1011, 'server error');
      return;
    }
    if (run === undefined) {
      socket.close(4004, 'the execution has ended');
      return;
    }
    const session = new WorkerSession(socket, run.team_uid, 'kubernetes', `execution:${run.id}`, {
      ...execution,
      owner: run.lease_owner,
    });
    session.tasks.set(run.id, { executionId: run.execution_id, confirmed: true });
    let set = this.sessions.get(session.owner);
    if (!set) {
      set = new Set();
      this.sessions.set(session.owner, set);
    }
    set.add(session);
    socket.on('pong', () => (session.lastSeen = Date.now()));
    socket.on('message', (data, isBinary) => {
      session.lastSeen = Date.now();
      if (!isBinary) this.tasks.handle(session, data.toString());
    });
    socket.on('close', () => void this.detach(session));
    socket.on('error', (error) => this.options.log.warn({ err: error, runId: run.id }, 'run pod connection failed'));
    // Sent on every connect: a pod's worker that has the execution already (a reconnect) keeps the one it has.
    const assignment = await this.assignment(run).catch((error) => {
      this.options.log.error({ err: error, runId: run.id }, 'could not assemble a run pod assignment');
      return undefined;
    });
    if (!assignment) {
      socket.close(1011, 'server error');
      return;
    }
    session.send({ type: 'task_assignment', data: { ...assignment, state: 'CLAIMED' } });
    this.options.log.info({ runId: run.id, connection: session.id }, 'run pod connected');
  }

  /** The worker's runs stay its own: their leases lapse unless it reconnects (to any replica) in time. */
  private async detach(session: WorkerSession): Promise<void> {
    session.closed = true;
    const set = this.sessions.get(session.owner);
    set?.delete(session);
    if (set?.size === 0) this.sessions.delete(session.owner);
    await store.deleteConnection(this.options.db, session.id).catch(() => undefined);
    this.options.log.info({ workerHost: session.workerHost, connection: session.id }, 'worker disconnected');
  }

  /** A worker key was revoked: its connections here close now (the worker's reconnect is then refused). */
  closeKey(keyUid: string): void {
    for (const session of this.allSessions()) {
      if (session.keyUid === keyUid) session.socket.close(4003, 'worker key revoked');
    }
  }

  poke(): void {
    // Every run created anywhere pokes: with no worker connected here there is nothing to offer.
    if (this.sessions.size > 0) this.dispatching.wake();
  }

  /** Offers each worker with room the oldest of its queued runs, spread over its connections. */
  private async dispatch(): Promise<void> {
    for (const set of this.sessions.values()) {
      const sessions = [...set];
      const free = sessions.reduce((sum, session) => sum + session.free, 0);
      if (free === 0) continue;
      const { teamUid, workerHost } = sessions[0]!;
      const runs = await this.options.lifecycle.claimForWorker(
        { teamUid, workerHost, owner: sessions[0]!.owner },
        free,
        this.options.leaseSeconds,
      );
      for (const run of runs) {
        const session = sessions.filter((candidate) => candidate.free > 0).sort((a, b) => b.free - a.free)[0];
        const assignment = session && (await this.assignment(run));
        if (session && assignment && session.send({ type: 'task_assignment', data: assignment })) {
          session.tasks.set(run.id, { executionId: run.execution_id, confirmed: false });
          continue;
        }
        await this.options.lifecycle.requeue(
          { id: run.id, owner: sessions[0]!.owner, executionId: run.execution_id },
          'the worker connection closed before the task reached it',
        );
      }
    }
  }

  private async assignment(run: ClaimedRun): Promise<TaskAssignment> {
    const { db, environments, tokens, apiUrl } = this.options;
    const environment =
      run.environment_id === null ? null : ((await environments.setupFor(run.team_uid, run.environment_id)) ?? null);
    const continuing = run.conversation_id !== null || run.execution_id > 1;
    const history =
      continuing && run.conversation_id !== null
        ? await conversationHistory(db, run.conversation_id, run.id, run.execution_id)
        : [];
    const before = run.execution_id > 1 ? await usageBefore(db, run.id) : null;
    return {
      task_id: run.id,
      execution_id: run.execution_id,
      task: {
        team_uid: run.team_uid,
        prompt: run.prompt,
        agent_config: run.agent_config,
        harness: run.harness,
        conversation_id: run.conversation_id,
        environment_id: run.environment_id,
      },
      environment,
      ...(before ? { usage_before: before } : {}),
      history: history.map((entry) => ({
        execution_id: entry.execution_id,
        stream: entry.stream,
        line: entry.line,
        at: new Date(entry.at).toISOString(),
      })),
      env_vars: runVariables(tokens, apiUrl(), run.id, run.execution_id),
      attachments:
        run.attachment_count === 0
          ? []
          : (await runAttachments(db, run.id)).map((file) => ({
              file_name: file.file_name,
              data_base64: file.data.toString('base64'),
            })),
      auth_secrets: await this.authSecrets(run),
      ...(await this.registrySecret(run)),
      mcp_servers: await this.mcpServers(run),
      ...(run.trace_parent ? { traceparent: run.trace_parent } : {}),
    };
  }

  /** The registered MCP servers the run names; one that cannot be used is left out, and the worker's run fails on it. */
  private async mcpServers(run: ClaimedRun): Promise<Record<string, ResolvedDefinition>> {
    const entries = (run.agent_config as { mcp_servers?: Record<string, { warp_id?: unknown }> }).mcp_servers ?? {};
    const servers: Record<string, ResolvedDefinition> = {};
    for (const entry of Object.values(entries)) {
      if (typeof entry.warp_id !== 'string' || entry.warp_id in servers) continue;
      const server = await this.options.mcpServer(run.team_uid, entry.warp_id).catch(() => undefined);
      if (server) servers[entry.warp_id] = server;
    }
    return servers;
  }

  /** The values of the team secrets the run names in `harness_auth_secrets` (the worker's harness needs them). */
  private async authSecrets(run: ClaimedRun): Promise<Record<string, string>> {
    const named = (run.agent_config as { harness_auth_secrets?: Record<string, unknown> }).harness_auth_secrets ?? {};
    const secrets: Record<string, string> = {};
    for (const name of Object.values(named)) {
      if (typeof name !== 'string' || name in secrets) continue;
      const value = await this.options.readSecret(run.team_uid, name);
      if (value !== null) secrets[name] = value;
    }
    return secrets;
  }

  /**
   * The environment's registry secret, resolved in the team that owns the environment (issue 47.3a), for the worker's
   * container sandbox to pull with; apart from auth_secrets, where a guest's secret of the same name may be.
   */
  private async registrySecret(run: ClaimedRun): Promise<{ registry_secret?: string }> {
    if (run.environment_id === null) return {};
    const secret = await this.options.environments.registrySecretFor(run.team_uid, run.environment_id);
    const value = secret ? await this.options.readSecret(secret.teamUid, secret.name) : null;
    return value === null ? {} : { registry_secret: value };
  }

  /** Tells the connections holding the run to stop it (they kill its process tree). */
  private cancel(runId: string, reason: string): void {
    for (const session of this.allSessions()) {
      const task = session.tasks.get(runId);
      if (!task) continue;
      session.tasks.delete(runId);
      session.send({ type: 'task_cancellation', data: { task_id: runId, execution_id: task.executionId, reason } });
    }
  }

  private announceFollowups(runId: string): void {
    for (const session of this.allSessions()) {
      const task = session.tasks.get(runId);
      if (task)
        session.send({ type: 'task_followups_available', data: { task_id: runId, execution_id: task.executionId } });
    }
  }

  /** Extends the leases of the runs this replica's connections hold; a run no longer theirs is cancelled on the worker. */
  private async renewLeases(): Promise<void> {
    const { lifecycle, leaseSeconds } = this.options;
    for (const set of this.sessions.values()) {
      const sessions = [...set];
      const ids = [...new Set(sessions.flatMap((session) => [...session.tasks.keys()]))];
      if (ids.length === 0) continue;
      const held = await lifecycle.renewLeases(sessions[0]!.owner, ids, leaseSeconds);
      for (const id of ids)
        if (!held.has(id))
          this.cancel(id, "the run is no longer this worker's (cancelled, or taken back after its lease expired)");
    }
  }

  private async heartbeat(): Promise<void> {
    const { heartbeatSeconds } = this.options;
    const silentSince = Date.now() - heartbeatSeconds * 2000;
    for (const session of this.allSessions()) {
      if (session.lastSeen < silentSince) {
        this.options.log.warn(
          { workerHost: session.workerHost, connection: session.id },
          'worker connection silent; closing it',
        );
        session.socket.terminate();
        continue;
      }
      session.socket.ping();
    }
    await store
      .refreshConnections(
        this.options.db,
        this.allSessions()
          .filter((session) => !session.execution)
          .map((session) => session.id),
        heartbeatSeconds * 3,
      )
      .catch((error) => this.options.log.warn({ err: error }, 'could not refresh worker presence'));
    await this.closeRevoked().catch((error) => this.options.log.warn({ err: error }, 'could not check worker keys'));
  }

  /** Keys revoked through another replica: their connections here close at the next heartbeat. */
  private async closeRevoked(): Promise<void> {
    const sessions = this.allSessions();
    const keyed = sessions.filter((session) => !session.execution);
    const active = await activeWorkerKeyUids(this.options.db, [...new Set(keyed.map((session) => session.keyUid))]);
    for (const session of keyed) {
      if (!active.has(session.keyUid)) session.socket.close(4003, 'worker key revoked');
    }
  }

  private allSessions(): WorkerSession[] {
    return [...this.sessions.values()].flatMap((set) => [...set]);
  }
}
