import path from 'node:path';
import type { EnvironmentConfig } from '../../environments/index.js';
import { HANGAR_MARK, type RunGitHub } from '../../github/index.js';
import type { Redactor } from '../../platform/redaction/redactor.js';
import type { ClaimedRun, Outcome } from '../../runs/index.js';
import type { ExecutionContext } from '../run/context.js';
import { publishFailed } from '../run/outcomes.js';
import { WorkspaceFiles } from '../workspace/files.js';
import { type CloneAccess, HOME_DIRECTORY } from '../workspace/workspace.js';
import { GIT_CREDENTIAL_HELPER_SCRIPT, HELPER_DIRECTORY, helperCommand } from './credential-helper.js';

type Report = (type: string, payload: Record<string, unknown>) => Promise<void>;

type PullRequestMode = 'open' | 'draft' | 'off';

interface GitHubRunConfig {
  pull_request?: PullRequestMode;
  branch?: string;
  gh_token?: boolean;
}

/**
 * One execution's GitHub side: the tokens of its repositories (for the clones, the harness's git through a
 * credential helper, the pull requests), and after a SUCCEEDED agent the push and the pull request. Every token is
 * added to the execution's redactor the moment it exists, so no write of the execution can carry it.
 */
export class GitHubSession {
  private constructor(
    private readonly context: ExecutionContext,
    private readonly run: ClaimedRun,
    private readonly access: RunGitHub,
    private readonly settings: GitHubRunConfig,
    /** The environment's default when the run's config names no pull_request mode. */
    private readonly defaultMode: PullRequestMode,
    /** The execution's: what Hangar publishes (title, description, commit message) goes through it too. */
    private readonly redactor: Redactor,
  ) {}

  /** null when the run has no repository a GitHub link covers. Throws with GitHub's reason when it refuses a token. */
  static async open(
    context: ExecutionContext,
    run: ClaimedRun,
    environment: EnvironmentConfig,
    redactor: Redactor,
  ): Promise<GitHubSession | null> {
    if (!context.github || environment.github_repos.length === 0) return null;
    const access = await context.github.open(run.team_uid, environment.github_repos, {
      runId: run.id,
      executionId: run.execution_id,
    });
    for (const credential of access.credentials) redactor.add('GITHUB_TOKEN', credential.token);
    if (access.credentials.length === 0) {
      await access.close();
      return null;
    }
    const settings = (run.agent_config.github ?? {}) as GitHubRunConfig;
    return new GitHubSession(context, run, access, settings, environment.github?.pull_request ?? 'open', redactor);
  }

  get branch(): string {
    return this.settings.branch ?? `hangar/${this.run.id}`;
  }

  /**
   * What the clones authenticate with. A follow-up checks out the branch its run pushed; a run naming its branch
   * (config.github.branch: a same-repository pull request's, for a review) checks it out when it exists, so Hangar's
   * push adds to it.
   */
  cloneAccess(): CloneAccess {
    const tokens = new Map(this.access.credentials.map((c) => [`${c.owner}/${c.repo}`.toLowerCase(), c.token]));
    const continues = this.run.execution_id > 1 || this.settings.branch !== undefined;
    return { tokens, ...(continues ? { branch: this.branch } : {}) };
  }

  /**
   * The harness's git access: Hangar's credential helper (see git-credential-helper.ts) in its HOME, with the
   * execution's installation tokens in a file beside it (0600, the run user's), and the configuration that points
   * git at it through GIT_CONFIG_* variables, so no token is in a variable or a command line. The team's personal
   * access token is never written: the helper asks the server for it, which answers only while the sandbox runs,
   * for the run's repositories, when the run's creator may use that secret. The helper list for the git host is
   * reset first, so no helper a setup configured is handed the credential that worked.
   * GH_TOKEN only when the run asks for it (config.github.gh_token), and only an installation token.
   */
  async prepareHarness(workspace: string): Promise<Record<string, string>> {
    const base = new URL(this.context.workspaces.gitBaseUrl);
    const own = this.access.credentials
      .filter((credential) => credential.source === 'installation')
      .map((credential) => ({
        url: `${base.protocol}//${base.host}/${repositoryPath(base, credential.owner, credential.repo)}`,
        username: 'x-access-token',
        password: credential.token,
      }));
    const directory = `${HOME_DIRECTORY}/${HELPER_DIRECTORY}`;
    await WorkspaceFiles.with(workspace, this.context.workspaces.owner, async (files) => {
      await files.mkdirs(directory);
      await files.writeFile(`${directory}/git-credentials.json`, `${JSON.stringify(own)}\n`);
      await files.writeFile(`${directory}/git-credential.mjs`, GIT_CREDENTIAL_HELPER_SCRIPT);
    });
    const scope = `credential.${base.protocol}//${base.host}`;
    const installation = this.access.credentials.find((credential) => credential.source === 'installation');
    return {
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_0: `${scope}.helper`,
      GIT_CONFIG_VALUE_0: '',
      GIT_CONFIG_KEY_1: `${scope}.helper`,
      GIT_CONFIG_VALUE_1: helperCommand(path.join(workspace, directory, 'git-credential.mjs')),
      GIT_CONFIG_KEY_2: `${scope}.useHttpPath`,
      GIT_CONFIG_VALUE_2: 'true',
      ...(this.settings.gh_token === true && installation ? { GH_TOKEN: installation.token } : {}),
    };
  }

  /**
   * After a SUCCEEDED agent: for each repository with changes, commits what is uncommitted with the agent's summary,
   * pushes the branch and opens (or updates) the pull request, recording a PULL_REQUEST artifact for a new one. A
   * refusal is on the timeline with GitHub's reason and in the run's status message; the run stays SUCCEEDED.
   */
  /** `note`: a paragraph the pull request's body gets after the summary (the hosts the run's network refused). */
  async publish(workspace: string, outcome: Outcome, report: Report, note = ''): Promise<Outcome> {
    const runUrl = this.access.runUrl;
    // The run's config wins over its environment's default, which wins over `open`.
    const mode = this.settings.pull_request ?? this.defaultMode;
    if (mode === 'off') return outcome;
    // What the agent said is the run's text: it may hold a secret the run was given (stored redacted, and so
    // published redacted too).
    const redact = (text: string) => this.redactor.text(text);
    const message = outcome.statusMessage?.message;
    const summary = (typeof message === 'string' ? redact(message).trim() : '') || undefined;
    const title = firstLine(summary ?? redact(this.run.prompt));
    if (redact(this.branch) !== this.branch) {
      await report('github_publish_failed', { reason: 'the branch name holds a secret value of the run' });
      return outcome;
    }
    const failures: string[] = [];
    for (const credential of this.access.credentials) {
      const name = `${credential.owner}/${credential.repo}`;
      try {
        const bundle = await this.context.workspaces.bundleChanges(
          workspace,
          credential.repo,
          summary ?? `Changes by Hangar run ${this.run.id}`,
          this.context.ledger.maxArtifactBytes,
        );
        const result = await this.access.publish({
          owner: credential.owner,
          repo: credential.repo,
          bundle,
          branch: this.branch,
          draft: mode === 'draft',
          title,
          body: [summary ?? '', note.trim(), `${HANGAR_MARK} [${this.run.id}](${runUrl}).`]
            .filter(Boolean)
            .join('\n\n'),
        });
        if (result.status === 'no_changes') continue;
        await report(result.created ? 'github_pull_request_opened' : 'github_pull_request_updated', {
          repo: name,
          branch: result.branch,
          commit: result.commit,
          number: result.number,
          url: result.url,
        });
        if (result.created)
          await this.context.ledger.artifacts.report(
            { runId: this.run.id, executionId: this.run.execution_id, teamUid: this.run.team_uid },
            { artifact_type: 'PULL_REQUEST', data: { url: result.url, branch: result.branch } },
          );
      } catch (error) {
        const reason = (error as Error).message;
        failures.push(`${name}: ${reason}`);
        await report('github_publish_failed', { repo: name, branch: this.branch, reason });
      }
    }
    return failures.length === 0 ? outcome : publishFailed(outcome, summary, failures);
  }

  /** Revokes the execution's installation tokens: they end with it. */
  close(): Promise<void> {
    return this.access.close();
  }
}

/** owner/repo under the git base URL's own path (a GitHub Enterprise address may have one). */
function repositoryPath(base: URL, owner: string, repo: string): string {
  const prefix = base.pathname.replace(/^\/+|\/+$/g, '');
  return `${prefix === '' ? '' : `${prefix}/`}${owner}/${repo}`.toLowerCase();
}

function firstLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? 'Changes by Hangar';
  const trimmed = line.trim();
  return trimmed.length > 72 ? `${trimmed.slice(0, 71)}…` : trimmed;
}
