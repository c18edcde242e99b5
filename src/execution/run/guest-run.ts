// A run in an environment another team shares (issue 47.6): the environment's setup is its owner's code and ran in
// the workspace the run's agent works in. The run keeps its own team's secrets out unless that team's admins allowed
// them in this environment, and its git ignores the command-running settings setup wrote (clone-git-config.ts).
import type { EnvironmentConfig, EnvironmentForRun } from '../../environments/index.js';
import type { BuiltInSetup } from '../model/built-in-setup.js';
import { guestGitEnvironment } from '../workspace/git-config.js';

/** Whose environment it is, when not the run's team's own; undefined for the team's own (or no environment). */
export function guestRunOf(
  environment: EnvironmentConfig | undefined,
): { ownerTeamUid: string; secretsAllowed: boolean } | undefined {
  const guest = (environment as EnvironmentForRun | undefined)?.guest_run;
  return guest ? { ownerTeamUid: guest.owner_team_uid, secretsAllowed: guest.secrets_allowed } : undefined;
}

/** Whether the run must go without its team's secrets (and GitHub tokens): a guest's run its admins did not allow. */
export function withholdsTeamSecrets(environment: EnvironmentConfig | undefined): boolean {
  const guest = guestRunOf(environment);
  return guest !== undefined && !guest.secretsAllowed;
}

/**
 * Why a run cannot start in the environment: its built-in harness was given team secrets (a key named in
 * harness_auth_secrets, an MCP server's secrets) and the run's team's admins did not allow secrets there. Its
 * creation was refused the same way; this catches a consent taken back while the run waited in the queue, and the
 * secrets of an MCP server another team shares (they are no more the environment owner's to see).
 */
export function guestSecretsRefusal(
  agentConfig: Record<string, unknown>,
  environmentId: string | null,
  environment: EnvironmentConfig | undefined,
  builtIn: BuiltInSetup | undefined,
): string | undefined {
  if (!builtIn || !withholdsTeamSecrets(environment)) return undefined;
  const auth = Object.values((agentConfig.harness_auth_secrets ?? {}) as Record<string, unknown>).some(
    (name) => typeof name === 'string' && name !== '',
  );
  const mcp = Object.values(builtIn.mcpServers).some(
    (server) => Object.keys((server as { secret_names?: Record<string, string> }).secret_names ?? {}).length > 0,
  );
  if (!auth && !mcp) return undefined;
  return (
    `Environment ${environmentId} is another team's: its setup runs inside this run, and this team's admins have not ` +
    `allowed this team's secrets there (\`hangar environments trust ${environmentId}\`, POST /environments/${environmentId}/trust)`
  );
}

/** The agent's variables, with git's guest settings when `guestHome` is set (a run in another team's environment). */
export function withGuestGit(env: Record<string, string>, guestHome: string | undefined): Record<string, string> {
  return guestHome === undefined ? env : guestGitEnvironment(env, guestHome);
}
