import type { EnvironmentConfig } from '../../../environments/index.js';
import type { Harness } from '../../harnesses/harness.js';
import { guestRunOf } from '../guest-run.js';
import { failed } from '../outcomes.js';
import type { Phase, RunScope } from './types.js';

/** The workspace as the agent gets it; `guestGitHome`: in another team's environment, the agent's HOME. */
export interface Ready {
  harness: Harness;
  guestGitHome: string | undefined;
}

/**
 * The last of the setup, after the environment's: the harness must exist here, the git settings another team's
 * setup wrote are taken out of this team's agent's way (clone-git-config.ts), and the run's files are added (after
 * the environment: a snapshot then never holds a run's attachments, and a restore never loses them).
 */
export async function ready(
  { context, run }: RunScope,
  workspace: string,
  harnessName: string,
  harness: Harness | undefined,
  environment: EnvironmentConfig | undefined,
): Promise<Phase<Ready>> {
  if (!harness) return { outcome: failed({ kind: 'harness_not_configured', harness: harnessName }) };
  let guestGitHome: string | undefined;
  if (guestRunOf(environment)) {
    const cleaned = await context.workspaces.cleanOwnersGitConfig(
      workspace,
      environment!.github_repos.map(({ repo }) => repo),
    );
    if (!cleaned.ok) return { outcome: failed({ kind: 'guest_git_config', message: cleaned.message }) };
    guestGitHome = cleaned.home;
  }
  if (run.attachment_count > 0) await context.workspaces.addFiles(workspace, await context.ledger.attachments(run.id));
  return { continue: { harness, guestGitHome } };
}
