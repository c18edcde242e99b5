// Which runner a new run executes with (issue 52, field 3), resolved once at creation and recorded in its config:
// the run's config.runner_id, else its agent's default_runner_uid, else its environment's default, else none (the
// operator's settings). The recorded shape is what every execution of the run takes (runners/shape.ts).
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { invalidRequest, notAuthorized } from '../platform/http/errors.js';
import type { RunnerDirectory } from './collaborators.js';
import type { AgentConfig } from './schemas.js';

/** The agent that executes the run, as far as its runner goes. */
export interface ExecutingAgent {
  name: string;
  defaultRunnerUid: string | null;
}

const LISTED = '`hangar runners list` (GET /runners) lists them';

/** Sets `config.runner_id` and `config.runner` to the resolved runner, or removes both when none applies. */
export async function resolveRunner(
  runners: RunnerDirectory | undefined,
  db: Kysely<DB>,
  teamUid: string,
  config: AgentConfig,
  agent: ExecutingAgent | undefined,
): Promise<void> {
  // Hangar records the shape; one sent in the request would let a run pick limits no runner gave it.
  delete config.runner;
  const named = config.runner_id?.trim();
  delete config.runner_id;
  const resolved = await pick(runners, db, teamUid, config, agent, named || undefined);
  if (!resolved) return;
  config.runner_id = resolved.uid;
  config.runner = resolved.runner as NonNullable<AgentConfig['runner']>;
}

async function pick(
  runners: RunnerDirectory | undefined,
  db: Kysely<DB>,
  teamUid: string,
  config: AgentConfig,
  agent: ExecutingAgent | undefined,
  named: string | undefined,
): Promise<{ uid: string; runner: { name: string } } | undefined> {
  if (named !== undefined) {
    // Missing and another team's answer alike, as an environment or MCP server the team cannot use does.
    const runner = await runners?.forRun(db, teamUid, named);
    if (!runner) throw notAuthorized(`runner ${named} does not exist or this team cannot use it; ${LISTED}`);
    return { uid: named, runner };
  }
  if (agent?.defaultRunnerUid) {
    const runner = await runners?.forRun(db, teamUid, agent.defaultRunnerUid);
    if (!runner)
      throw invalidRequest(
        `agent ${agent.name}'s default runner ${agent.defaultRunnerUid} no longer exists in this team; set another default_runner_uid (PUT /agent/identities/{uid}) or name config.runner_id`,
      );
    return { uid: agent.defaultRunnerUid, runner };
  }
  if (config.environment_id === undefined || !runners) return undefined;
  const fallback = await runners.environmentDefault(db, teamUid, config.environment_id);
  if (!fallback) return undefined;
  const runner = await runners.forRun(db, fallback.teamUid, fallback.runnerUid);
  if (!runner)
    throw invalidRequest(
      `environment ${config.environment_id}'s default runner ${fallback.runnerUid} no longer exists; its owners can set another default_runner_uid, or name config.runner_id`,
    );
  return { uid: fallback.runnerUid, runner };
}
