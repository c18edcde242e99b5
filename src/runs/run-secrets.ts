// A run's code can read every team secret it is given, so whoever starts or steers a run needs the right to use
// each of them.
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { notAuthorized } from '../platform/http/errors.js';
import type { EnvironmentDirectory, McpServerDirectory, SecretAccess, SecretUser } from './collaborators.js';
import type { AgentConfig } from './schemas.js';
import * as store from './store.js';
import { callerVisibility } from './visibility.js';

/** Every team secret `harness_auth_secrets` names. */
export function harnessAuthSecrets(config: AgentConfig): string[] {
  return Object.values(config.harness_auth_secrets ?? {}).filter(
    (name): name is string => typeof name === 'string' && name !== '',
  );
}

/**
 * Refuses a new run naming secrets `user` may not use: naming one is using it. The creator is the run's own, or the
 * user who saved the schedule or automation that starts it (their role is looked up as of now).
 */
export async function checkNewRunSecrets(
  secrets: SecretAccess,
  db: Kysely<DB>,
  user: SecretUser,
  names: string[],
): Promise<void> {
  const refused = await secrets.unusableSecrets(db, user, names);
  if (refused.length > 0) {
    throw notAuthorized(
      `this run would use team secret${refused.length > 1 ? 's' : ''} ${refused.join(', ')}, which ${refused.length > 1 ? 'are' : 'is'} not granted to you, ` +
        "to the run's agent identity or to its environment; a team admin can grant it with `hangar secrets grant <name> --agent <uid>` or `--environment <id>` (POST /secrets/{name}/grants)",
    );
  }
}

/**
 * A follow-up steers a harness that holds the run's secrets (it may ask the agent to print its key), so its
 * author needs the right to use them, as the run's creator did. Reckoned with the run's own agent identity and
 * environment. A run the caller cannot see is left to the follow-up itself (404).
 */
export async function checkFollowupSecrets(
  db: Kysely<DB>,
  access: { mcpServers: McpServerDirectory; secrets: SecretAccess; environments: EnvironmentDirectory },
  caller: Caller,
  runId: string,
): Promise<void> {
  const run = await store.secretContext(db, callerVisibility(caller), runId);
  if (!run) return;
  const config = run.agent_config as AgentConfig;
  const names = harnessAuthSecrets(config);
  for (const entry of Object.values(config.mcp_servers ?? {}) as Array<{ warp_id?: unknown }>) {
    if (typeof entry.warp_id === 'string')
      names.push(...((await access.mcpServers.secretsForRun(db, caller.teamUid, entry.warp_id)) ?? []));
  }
  // And those its environment hands its code without naming them (the team's GitHub token).
  if (run.environment_id !== null)
    names.push(...(await access.environments.sandboxSecretsForRun(caller.teamUid, run.environment_id, db)));
  const refused = await access.secrets.unusableSecrets(
    db,
    {
      teamUid: caller.teamUid,
      creatorUid: caller.principal.uid,
      agentUid: run.executor_type === 'service_account' ? run.executor_uid : null,
      environmentId: run.environment_id,
    },
    names,
  );
  if (refused.length > 0) {
    throw notAuthorized(
      `this run holds team secret${refused.length > 1 ? 's' : ''} ${refused.join(', ')}, which ${refused.length > 1 ? 'are' : 'is'} not granted to you; only someone who may use ${refused.length > 1 ? 'them' : 'it'} can send it follow-ups`,
    );
  }
}
