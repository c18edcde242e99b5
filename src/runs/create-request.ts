// Checks a create request against the caller's team and turns it into the run to insert. Both the API and the
// slices that start runs on someone's behalf (schedules, automations) go through here, so every run is checked
// the same way.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { authSecretName, type BuiltInHarness, isBuiltInHarness } from '../models/index.js';
import { type ApiError, invalidRequest, notAuthorized } from '../platform/http/errors.js';
import type { AddressPolicy } from '../platform/net/address-policy.js';
import type {
  AgentDirectory,
  EnvironmentDirectory,
  McpServerDirectory,
  RunnerDirectory,
  SecretAccess,
  SkillResolver,
} from './collaborators.js';
import type { NewAttachment, NewRun } from './lifecycle/types.js';
import { checkMcpServers } from './mcp-server-config.js';
import { mergeMetadata, metadataProblem } from './metadata.js';
import { checkNewRunSecrets, harnessAuthSecrets } from './run-secrets.js';
import { resolveRunner } from './runner-config.js';
import type { AgentConfig, CreateRunBody, CredentialStrategy, RunSource } from './schemas.js';
import * as store from './store.js';
import { deriveTitle } from './title.js';
import { callerVisibility } from './visibility.js';

/** What checking a create request needs: the other slices' answers and the server's settings. */
export interface RunCreationDependencies {
  skills: SkillResolver;
  environments: EnvironmentDirectory;
  mcpServers: McpServerDirectory;
  secrets: SecretAccess;
  agents: AgentDirectory;
  /** The team's runners (config.runner_id and the agents' and environments' defaults). */
  runners?: RunnerDirectory;
  /** A member of the team by user ID or e-mail (for `on_behalf_of`); undefined when they are not one. */
  teamMember?: (db: Kysely<DB>, teamUid: string, userIdOrEmail: string) => Promise<{ uid: string } | undefined>;
  /** Where inline HTTP MCP servers (`config.mcp_servers.<name>.url`) may be. */
  addressPolicy: AddressPolicy;
  /** Names a run may give as `config.harness.type`: the built-in ones and the operator's. */
  harnessNames(): string[];
  /**
   * Why a run of a built-in harness may not use a model (unknown, disabled, no credentials); null when it may.
   * `ownKey`: the run names a team secret with its key.
   */
  modelRefusal?: (modelId: string, harness: BuiltInHarness, ownKey: boolean) => ApiError | null;
  /** The operator's highest `config.max_cost_usd` (HANGAR_RUN_MAX_COST_USD); undefined: no maximum. */
  maxCostUsd?: number;
  /** Throws 403 budget_exceeded when the team has spent its monthly budget (see budgets/). */
  checkTeamBudget?: (db: Kysely<DB>, teamUid: string) => Promise<void>;
}

/** Where a run comes from, beyond what its creator asked for. */
export interface RunOrigin {
  source: RunSource;
  schedule?: { schedule_id: string; schedule_name: string; cron_schedule: string };
  scheduleTick?: Date;
  /** The automation that fires the run, with its factory. */
  automation?: { id: string; factoryUid: string };
  /** What triggered the run: an absolute URL (a GitHub thread) or a path under the public URL (a webhook's page). */
  triggerUrl?: string;
  /** The address of the API request that creates it, for the audit entry of a share link made with it. */
  clientAddress?: string;
}

const ENVIRONMENT_ID = /^[A-Za-z0-9]{22}$/;
/** `repo:name`, `owner/repo:name` or `owner/repo:path/to/SKILL.md`. */
const SKILL_SPEC = /^(?:[A-Za-z0-9_.-]+\/)?[A-Za-z0-9_.-]+:[^\s:][^\s]*$/;
const MAX_ATTACHMENTS = 5;

/**
 * Checks a create request as `caller` within `db` and builds the row to insert. The checks run in a fixed order:
 * the request's own shape first, then what it refers to, so the same request always meets the same refusal.
 */
export async function prepareRun(
  dependencies: RunCreationDependencies,
  db: Kysely<DB>,
  caller: Caller,
  body: CreateRunBody,
  origin: RunOrigin,
): Promise<{ run: NewRun; attachments: NewAttachment[] }> {
  const config: AgentConfig = { ...(body.config ?? {}) };
  const skillSpec = body.skill ?? config.skill_spec ?? null;
  checkSkillSpec(skillSpec, config);
  checkHarnessAndModel(dependencies, config);
  checkCostCap(dependencies, config);
  const prompt = body.prompt ?? '';
  if (prompt.trim() === '' && skillSpec === null) throw invalidRequest('prompt is required unless a skill is given');
  const member = await onBehalfOf(dependencies, db, caller, body);
  // Created for a member: the run is theirs (its creator, its personal scope, their secret grants); the agent executes.
  const creator = member ? { type: 'user' as const, uid: member.uid } : caller.principal;
  const agentSkill = skillSpec === null ? null : await resolveSkill(dependencies, db, caller, skillSpec, config);
  const mcpSecrets = config.mcp_servers
    ? await checkMcpServers(
        config.mcp_servers,
        (uid) => dependencies.mcpServers.secretsForRun(db, caller.teamUid, uid),
        dependencies.addressPolicy,
      )
    : [];
  const attachments = decodeAttachments(body);

  await checkEnvironment(dependencies, db, caller, config);
  const parent = await parentOf(db, caller, body);
  const parentMetadata = parent?.metadata ?? {};
  if (
    body.conversation_id !== undefined &&
    !(await store.conversationExists(db, callerVisibility(caller), body.conversation_id))
  ) {
    throw invalidRequest(`conversation ${body.conversation_id} does not exist or is not visible to you`);
  }
  // A team over its monthly budget starts nothing more (schedules and automations record the refusal).
  await dependencies.checkTeamBudget?.(db, caller.teamUid);
  const executor = await executorOf(dependencies, db, caller, body, config);
  await resolveRunner(dependencies.runners, db, caller.teamUid, config, executor.agent);
  // Recorded resolved, so every execution and the run's detail say the same: the run's, its agent's, else EXECUTOR.
  config.credential_strategy = config.credential_strategy ?? executor.agent?.credentialStrategy ?? 'EXECUTOR';
  await checkNewRunSecrets(
    dependencies.secrets,
    db,
    {
      teamUid: caller.teamUid,
      creatorUid: creator.uid,
      agentUid: executor.type === 'service_account' ? executor.uid : null,
      environmentId: config.environment_id ?? null,
    },
    [
      ...harnessAuthSecrets(config),
      ...mcpSecrets,
      ...(config.environment_id
        ? await dependencies.environments.secretsForRun(caller.teamUid, config.environment_id, db)
        : []),
    ],
  );
  const requestMetadata = body.metadata ?? {};
  const problem =
    metadataProblem(requestMetadata) ?? metadataProblem(mergeMetadata({}, parentMetadata, requestMetadata));
  if (problem) throw invalidRequest(problem);

  const teamOwned = body.team ?? true;
  const id = randomUUID();
  const run: NewRun = {
    id,
    team_uid: caller.teamUid,
    title: body.title?.trim() || deriveTitle(prompt, agentSkill?.name ?? null),
    prompt,
    state: 'QUEUED',
    source: origin.source,
    execution_location: 'REMOTE',
    mode: body.mode ?? 'normal',
    scope_type: teamOwned ? 'Team' : 'User',
    scope_uid: teamOwned ? caller.teamUid : creator.uid,
    agent_config: config,
    config_name: config.name ?? null,
    model_id: config.harness?.model_id ?? config.model_id ?? null,
    skill_spec: config.skill_spec ?? null,
    agent_skill: agentSkill,
    environment_id: config.environment_id ?? null,
    worker_host: selfHostedWorker(config),
    schedule: origin.schedule ?? null,
    schedule_tick: origin.scheduleTick ?? null,
    parent_run_id: body.parent_run_id ?? null,
    conversation_id: body.conversation_id ?? null,
    creator_type: creator.type,
    creator_uid: creator.uid,
    executor_type: executor.type,
    executor_uid: executor.uid,
    metadata: mergeMetadata({}, parentMetadata, requestMetadata),
    interactive: body.interactive ?? false,
    attachment_count: attachments.length,
    root_run_id: parent ? (parent.root_run_id ?? parent.id) : id,
    automation_id: origin.automation?.id ?? null,
    factory_uid: origin.automation?.factoryUid ?? executor.factoryUid ?? null,
    trigger_url: origin.triggerUrl ?? (origin.schedule ? `/schedules#${origin.schedule.schedule_id}` : null),
  };
  return { run, attachments };
}

function checkSkillSpec(skillSpec: string | null, config: AgentConfig): void {
  if (skillSpec !== null && !SKILL_SPEC.test(skillSpec)) {
    throw invalidRequest(`skill "${skillSpec}" must look like repo:name or owner/repo:path/to/SKILL.md`);
  }
  if (skillSpec !== null && config.skills?.length)
    throw invalidRequest('config.skills and a skill spec cannot be used together');
}

function checkHarnessAndModel(dependencies: RunCreationDependencies, config: AgentConfig): void {
  const harness = config.harness?.type;
  if (harness !== undefined && !dependencies.harnessNames().includes(harness)) {
    throw invalidRequest(
      `config.harness.type "${harness}" is not a harness of this server; choose one of ${dependencies.harnessNames().join(', ')}`,
    );
  }
  // A run naming a built-in harness takes its model from the catalogue, so a model it cannot use is refused now.
  // Without a harness type, the harness is decided where the run executes (an operator's harness reads model_id
  // as it likes), and a model the default harness cannot use fails the run when it starts.
  const modelId = config.harness?.model_id ?? config.model_id;
  if (harness !== undefined && isBuiltInHarness(harness) && modelId !== undefined) {
    const refusal = dependencies.modelRefusal?.(modelId, harness, authSecretName(harness, config) !== undefined);
    if (refusal) throw refusal;
  }
}

/** Finds the skill in the team's repositories and records it in `config`. */
async function resolveSkill(
  dependencies: RunCreationDependencies,
  db: Kysely<DB>,
  caller: Caller,
  skillSpec: string,
  config: AgentConfig,
): Promise<NewRun['agent_skill']> {
  const skill = await dependencies.skills.resolveSkill(caller.teamUid, skillSpec, db);
  if (!skill)
    throw invalidRequest(`skill "${skillSpec}" was not found in the repositories of this team's environments`);
  config.skill_spec = skill.id;
  // The skill's body is the base prompt, unless the request gives one explicitly.
  config.base_prompt ??= skill.base_prompt;
  return { name: skill.name, description: skill.description, full_path: skill.full_path };
}

function decodeAttachments(body: CreateRunBody): NewAttachment[] {
  const all = [...(body.attachments ?? []), ...(body.images ?? [])];
  if (all.length > MAX_ATTACHMENTS)
    throw invalidRequest(`at most ${MAX_ATTACHMENTS} attachments are allowed, got ${all.length}`);
  return all.map((attachment, index) => {
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(attachment.data))
      throw invalidRequest(`attachments[${index}].data is not base64`);
    return {
      file_name: attachment.file_name ?? `attachment-${index + 1}`,
      mime_type: attachment.mime_type,
      data: Buffer.from(attachment.data, 'base64'),
    };
  });
}

async function checkEnvironment(
  dependencies: RunCreationDependencies,
  db: Kysely<DB>,
  caller: Caller,
  config: AgentConfig,
): Promise<void> {
  if (config.environment_id === undefined) return;
  if (!ENVIRONMENT_ID.test(config.environment_id)) {
    throw invalidRequest('config.environment_id must be 22 characters of [A-Za-z0-9]');
  }
  if (!(await dependencies.environments.isAccessible(caller.teamUid, config.environment_id, db))) {
    throw notAuthorized(`environment ${config.environment_id} does not exist or this team cannot access it`);
  }
}

/** A child run inherits its parent's metadata and root; the parent must be visible to the caller. */
async function parentOf(db: Kysely<DB>, caller: Caller, body: CreateRunBody) {
  if (body.parent_run_id === undefined) return undefined;
  const found = await store.runLineage(db, callerVisibility(caller), body.parent_run_id);
  if (!found) throw invalidRequest(`parent run ${body.parent_run_id} does not exist or is not visible to you`);
  return found;
}

/**
 * Who executes the run. An agent's own key runs as that agent; a user may delegate to an agent with
 * agent_identity_uid. The agent's worker becomes the run's default `config.worker_host`.
 */
async function executorOf(
  dependencies: RunCreationDependencies,
  db: Kysely<DB>,
  caller: Caller,
  body: CreateRunBody,
  config: AgentConfig,
): Promise<{
  type: Caller['principal']['type'];
  uid: string;
  factoryUid?: string | null;
  /** The executing agent identity, for its default runner and credential strategy. */
  agent?: { name: string; defaultRunnerUid: string | null; credentialStrategy: CredentialStrategy | null };
}> {
  if (caller.principal.available === false) {
    throw notAuthorized(`agent ${caller.principal.displayName} is over the team's plan limit and cannot execute runs`);
  }
  if (body.agent_identity_uid !== undefined) {
    const identity = await dependencies.agents.findForRun(db, caller.teamUid, body.agent_identity_uid);
    if (!identity) throw notAuthorized(`agent identity ${body.agent_identity_uid} does not exist in this team`);
    if (!identity.available)
      throw notAuthorized(`agent identity ${identity.name} is over the team's plan limit and cannot execute runs`);
    // The identity's worker is the default; the run's own config.worker_host (even "warp") wins.
    if (identity.worker_host) config.worker_host ??= identity.worker_host;
    return {
      type: 'service_account',
      uid: identity.uid,
      factoryUid: identity.factory_uid ?? null,
      agent: {
        name: identity.name,
        defaultRunnerUid: identity.default_runner_uid ?? null,
        credentialStrategy: identity.credential_strategy ?? null,
      },
    };
  }
  if (caller.principal.type === 'service_account') {
    const self = await dependencies.agents.findForRun(db, caller.teamUid, caller.principal.uid);
    if (self?.worker_host && config.worker_host === undefined) config.worker_host = self.worker_host;
    return {
      type: caller.principal.type,
      uid: caller.principal.uid,
      factoryUid: self?.factory_uid ?? null,
      ...(self
        ? {
            agent: {
              name: self.name,
              defaultRunnerUid: self.default_runner_uid ?? null,
              credentialStrategy: self.credential_strategy ?? null,
            },
          }
        : {}),
    };
  }
  return { type: caller.principal.type, uid: caller.principal.uid };
}

/**
 * The member a run is created on behalf of (`on_behalf_of`), checked: only an agent's API key, only when that agent
 * has on_behalf_of_enabled (a team administrator's choice), only for a member of the run's team. Every refusal is
 * 403 and says the same of an unknown person and of another team's, so the answer tells nothing of who exists.
 */
async function onBehalfOf(
  dependencies: RunCreationDependencies,
  db: Kysely<DB>,
  caller: Caller,
  body: CreateRunBody,
): Promise<{ uid: string } | undefined> {
  if (body.on_behalf_of === undefined) return undefined;
  if (caller.principal.type !== 'service_account')
    throw notAuthorized('on_behalf_of takes the API key of an agent identity, not a person');
  if (body.agent_identity_uid !== undefined)
    throw invalidRequest('on_behalf_of and agent_identity_uid cannot be used together: the calling agent executes');
  const self = await dependencies.agents.findForRun(db, caller.teamUid, caller.principal.uid);
  if (!self?.on_behalf_of_enabled)
    throw notAuthorized(
      `agent ${caller.principal.displayName} may not create runs on behalf of others (on_behalf_of_enabled)`,
    );
  const member = await dependencies.teamMember?.(db, caller.teamUid, body.on_behalf_of.trim());
  if (!member) throw notAuthorized(`${body.on_behalf_of} is not a member of this team`);
  return member;
}

/** Self-hosted worker named by the config; empty or `warp` means Hangar's own executors. */
function selfHostedWorker(config: AgentConfig): string | null {
  const host = config.worker_host?.trim();
  return !host || host === 'warp' ? null : host;
}

/** `config.max_cost_usd` may not exceed the operator's maximum. */
function checkCostCap(dependencies: RunCreationDependencies, config: AgentConfig): void {
  const cap = config.max_cost_usd;
  if (cap !== undefined && dependencies.maxCostUsd !== undefined && cap > dependencies.maxCostUsd)
    throw invalidRequest(
      `config.max_cost_usd: ${cap} is above this server's maximum of ${dependencies.maxCostUsd} USD (HANGAR_RUN_MAX_COST_USD)`,
    );
}
