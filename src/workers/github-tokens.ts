import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { EnvironmentSetups } from '../execution/index.js';
import { type GitHubAccess, GitHubRefusal, type RepoCredential, type RunGitHub } from '../github/index.js';
import { activateRedactor } from '../platform/redaction/active.js';
import { Redactor } from '../platform/redaction/redactor.js';
import { heldRun, holds } from './store.js';

/** What a worker gets for its execution's GitHub access (the reply to `task_github_access`). */
export type GitHubAccessReply =
  | { held: false }
  | { held: true; refused: string }
  | { held: true; credentials: RepoCredential[]; api_url: string; run_url: string };

interface Minted {
  owner: string;
  runId: string;
  executionId: number;
  access: RunGitHub;
  reply: GitHubAccessReply;
  /** The tokens stay out of every line this server logs while they exist. */
  deactivate: () => void;
}

/**
 * The GitHub tokens this replica minted for its workers' executions, in memory only (never stored): a worker asks
 * for them when its execution sets up, and gets its run's repositories' tokens, minted here with the App's key
 * (which never leaves the server). They are revoked when the execution ends: by the worker itself at its end, and
 * here when its end (or release) reaches this replica, or once the run is no longer the worker's (a cancel, a
 * takeback after the worker vanished, an end that reached another replica) at the next sweep.
 */
export class WorkerGitHubTokens {
  private readonly minted = new Map<string, Minted>();
  private readonly asking = new Map<string, Promise<GitHubAccessReply>>();

  constructor(
    private readonly options: {
      db: Kysely<DB>;
      github: GitHubAccess | undefined;
      /** The API the tokens are revoked at (the worker revokes its own there too). */
      apiUrl: string;
      environments: EnvironmentSetups;
    },
  ) {}

  /**
   * The execution's access: its run must be the worker's. Asked again (a call resent after a reconnect, perhaps
   * while the first is still minting), the same tokens: none is minted that nobody would revoke.
   */
  access(owner: string, runId: string, executionId: number): Promise<GitHubAccessReply> {
    const key = `${runId}/${executionId}`;
    const known = this.minted.get(key);
    if (known?.owner === owner) return Promise.resolve(known.reply);
    let asked = this.asking.get(key);
    if (!asked) {
      asked = this.mint(owner, runId, executionId).finally(() => this.asking.delete(key));
      this.asking.set(key, asked);
    }
    return asked;
  }

  private async mint(owner: string, runId: string, executionId: number): Promise<GitHubAccessReply> {
    const key = `${runId}/${executionId}`;
    const run = await heldRun(this.options.db, owner, runId, executionId);
    if (!run) return { held: false };
    const { github } = this.options;
    const environment =
      run.environment_id === null
        ? undefined
        : await this.options.environments.setupFor(run.team_uid, run.environment_id);
    if (!github || !environment || environment.github_repos.length === 0)
      return { held: true, credentials: [], api_url: this.options.apiUrl, run_url: '' };
    let access: RunGitHub;
    try {
      access = await github.open(run.team_uid, environment.github_repos, { runId, executionId });
    } catch (error) {
      if (error instanceof GitHubRefusal) return { held: true, refused: error.message };
      throw error;
    }
    const redactor = new Redactor();
    for (const credential of access.credentials) redactor.add('GITHUB_TOKEN', credential.token);
    const reply: GitHubAccessReply = {
      held: true,
      credentials: access.credentials,
      api_url: this.options.apiUrl,
      run_url: access.runUrl,
    };
    this.minted.set(key, {
      owner,
      runId,
      executionId,
      access,
      reply,
      deactivate: activateRedactor(runId, executionId, redactor),
    });
    return reply;
  }

  /** The execution ended (or went back to the queue): its tokens are revoked. */
  async end(runId: string, executionId: number): Promise<void> {
    const key = `${runId}/${executionId}`;
    const minted = this.minted.get(key);
    if (!minted) return;
    this.minted.delete(key);
    minted.deactivate();
    await minted.access.close();
  }

  /** Revokes the tokens of executions whose run is no longer their worker's. */
  async sweep(): Promise<void> {
    for (const minted of [...this.minted.values()]) {
      if (!(await holds(this.options.db, minted.owner, minted.runId, minted.executionId)))
        await this.end(minted.runId, minted.executionId);
    }
  }
}
