import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { authSecretName } from '../models/index.js';
import type { Caller } from '../identities/index.js';
import { isBuiltInHarness, type BuiltInHarness } from '../models/index.js';
import type { Principal } from '../identities/index.js';
import type { DB } from '../database.js';
import type { AddressPolicy } from '../platform/net/address-policy.js';
import {
  ApiError,
  conflict,
  featureNotAvailable,
  invalidRequest,
  notAuthorized,
  notFound,
} from '../platform/http/errors.js';
import { type CursorCodec, InvalidCursorError, type CursorValue } from '../platform/http/pagination.js';
import { mergeMetadata, MAX_METADATA_FILTER_PAIRS, metadataPairProblem, metadataProblem } from './metadata.js';
import { renderEvent, renderRun } from './render.js';
import { RunInserts } from './lifecycle/insert-batches.js';
import type { RunLifecycle } from './lifecycle/run-lifecycle.js';
import { OPERATOR_CANCELLABLE_STATES } from './lifecycle/states.js';
import type { CapacityLimits, NewAttachment, NewRun } from './lifecycle/types.js';
import type { AgentConfig, CreateRunBody, FollowupBody, ListRunsQuery, RunItem, RunSource } from './schemas.js';
import { cancelRefusal } from './state.js';
import * as store from './store.js';
import { deriveTitle } from './title.js';

/** What run creation needs to know about agent identities (the identities slice provides it). */
export interface AgentDirectory {
  findForRun(
    db: Kysely<DB>,
    teamUid: string,
    uid: string,
  ): Promise<{ uid: string; name: string; available: boolean; worker_host: string | null } | undefined>;
}

/** Which shared MCP servers a team may use in its runs (the MCP slice provides it). */
export interface McpServerDirectory {
  /**
   * The team secrets a run of `teamUid` hands over by using the server: those it refers to when the team owns it,
   * none for a server another team shares (that team's admins chose to share its secrets); null when the team may
   * not use it.
   */
  secretsForRun(db: Kysely<DB>, teamUid: string, uid: string): Promise<string[] | null>;
}

/** Which team secrets a run may use (the secrets slice provides it). */
export interface SecretAccess {
  /** The names among `names` a run acting as `user` may not use. */
  unusableSecrets(
    db: Kysely<DB>,
    user: { teamUid: string; creatorUid: string; agentUid: string | null; environmentId: string | null },
    names: string[],
  ): Promise<string[]>;
}

/** Skills a team's runs may use (the environments slice provides it). */
export interface SkillResolver {
  resolveSkill(
    teamUid: string,
    spec: string,
    db: Kysely<DB>,
  ): Promise<{ id: string; name: string; description: string; base_prompt: string; full_path: string } | null>;
}

/** Environments a team may run in (the environments slice provides it). */
export interface EnvironmentDirectory {
  isAccessible(teamUid: string, uid: string, db: Kysely<DB>): Promise<boolean>;
}

export interface RunsServiceOptions {
  db: Kysely<DB>;
  /** Every write of a run's state, events and inputs. */
  lifecycle: RunLifecycle;
  skills: SkillResolver;
  environments: EnvironmentDirectory;
  mcpServers: McpServerDirectory;
  secrets: SecretAccess;
  agents: AgentDirectory;
  cursors: CursorCodec;
  publicUrl: string;
  metadataFiltering: boolean;
  limits: CapacityLimits;
  /** Where inline HTTP MCP servers (`config.mcp_servers.<name>.url`) may be. */
  addressPolicy: AddressPolicy;
  /** Names a run may give as `config.harness.type`: the built-in ones and the operator's. */
  harnessNames(): string[];
  /** Called once new runs are committed in QUEUED, to wake the engines. */
  onQueued(): void;
  /** Why a run of a built-in harness may not use a model (unknown, disabled, no credentials); null when it may. */
  /** Why a run of a built-in harness may not use a model; `ownKey`: the run names a team secret with its key. */
  modelRefusal?: (modelId: string, harness: BuiltInHarness, ownKey: boolean) => ApiError | null;
}

/** Where a run comes from, beyond what its creator asked for. */
export interface RunOrigin {
  source: RunSource;
  schedule?: { schedule_id: string; schedule_name: string; cron_schedule: string };
  scheduleTick?: Date;
}

/** A run another slice starts on someone's behalf (a schedule's tick, a webhook delivery). */
export interface RunRequest {
  /** The team and creator: the run is checked and owned as if they had created it. */
  owner: Caller;
  body: CreateRunBody;
  origin: RunOrigin;
  /** Files for the workspace beyond the body's attachments (a delivery's payload). */
  files?: NewAttachment[];
}

const ENVIRONMENT_ID = /^[A-Za-z0-9]{22}$/;
const EMPTY_ENVIRONMENT = 'empty-environment';
/** `repo:name`, `owner/repo:name` or `owner/repo:path/to/SKILL.md`. */
const SKILL_SPEC = /^(?:[A-Za-z0-9_.-]+\/)?[A-Za-z0-9_.-]+:[^\s:][^\s]*$/;

function visibility(caller: Caller): store.Visibility {
  return { teamUid: caller.teamUid, principalUid: caller.principal.uid };
}

/**
 * Checks `mcp_servers`: each entry is exactly one of a command, a URL, or a reference (`warp_id`) to an MCP
 * server the team owns or that is shared with it. Every shape problem (400) is reported before access (403).
 * Returns the team secrets the referenced servers hand to the run.
 */
async function checkMcpServers(
  servers: Record<string, object>,
  secretsOf: (uid: string) => Promise<string[] | null>,
  addressPolicy: AddressPolicy,
): Promise<string[]> {
  const references: Array<[name: string, uid: string]> = [];
  for (const [name, entry] of Object.entries(servers)) {
    const server = entry as Record<string, unknown>;
    const forms = ['command', 'url', 'warp_id'].filter((key) => key in server);
    if (forms.length !== 1) {
      throw invalidRequest(`config.mcp_servers.${name} must have exactly one of command, url or warp_id`);
    }
    const form = forms[0]!;
    if (typeof server[form] !== 'string' || server[form] === '') {
      throw invalidRequest(`config.mcp_servers.${name}.${form} must be a non-empty string`);
    }
    if (form === 'url') {
      try {
        new URL(server.url as string);
      } catch {
        throw invalidRequest(`config.mcp_servers.${name}.url is not a valid URL`);
      }
      const refusal = await addressPolicy.refusalOfUrl(server.url as string);
      if (refusal) throw invalidRequest(`config.mcp_servers.${name}.url is refused: ${refusal}`);
    }
    if (form === 'warp_id') references.push([name, server.warp_id as string]);
  }
  const secrets: string[] = [];
  for (const [name, uid] of references) {
    const names = await secretsOf(uid);
    if (names === null) {
      throw notAuthorized(
        `config.mcp_servers.${name} references MCP server ${uid}, which does not exist or this team cannot use`,
      );
    }
    secrets.push(...names);
  }
  return secrets;
}

/** Every team secret `harness_auth_secrets` names. */
function harnessAuthSecrets(config: AgentConfig): string[] {
  return Object.values(config.harness_auth_secrets ?? {}).filter(
    (name): name is string => typeof name === 'string' && name !== '',
  );
}

function decodeAttachments(body: CreateRunBody): NewAttachment[] {
  const all = [...(body.attachments ?? []), ...(body.images ?? [])];
  if (all.length > 5) throw invalidRequest(`at most 5 attachments are allowed, got ${all.length}`);
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

/** Self-hosted worker named by the config; empty or `warp` means Hangar's own executors. */
function selfHostedWorker(config: AgentConfig): string | null {
  const host = config.worker_host?.trim();
  return !host || host === 'warp' ? null : host;
}

export class RunsService {
  private readonly inserts: RunInserts;

  constructor(private readonly options: RunsServiceOptions) {
    this.inserts = new RunInserts(options.lifecycle, options.limits, options.onQueued);
  }

  private get db() {
    return this.options.db;
  }

  /** Creates a run as `caller` (the source is API unless another slice starts it, e.g. a judge run). */
  async create(
    caller: Caller,
    body: CreateRunBody,
    origin: RunOrigin = { source: 'API' },
  ): Promise<{ run_id: string; task_id: string; state: string; at_capacity?: boolean }> {
    const { run, attachments } = await this.prepare(this.db, caller, body, origin);
    const { atCapacity } = await this.inserts.insert(run, attachments);
    return { run_id: run.id, task_id: run.id, state: run.state, ...(atCapacity ? { at_capacity: true } : {}) };
  }

  /** For runs created inside another slice's transaction (the scheduler's), once it has committed. */
  announceQueued(): void {
    this.options.onQueued();
  }

  /** Routes a follow-up by the run's state; the new state shows in `GET /agent/runs/{id}`. */
  async followup(caller: Caller, runId: string, body: FollowupBody): Promise<Record<string, never>> {
    await this.checkFollowupSecrets(caller, runId);
    await this.options.lifecycle.followup(visibility(caller), runId, body.message ?? '', body.mode);
    return {};
  }

  /**
   * A follow-up steers a harness that holds the run's secrets (it may ask the agent to print its key), so its
   * author needs the right to use them, as the run's creator did. Reckoned with the run's own agent identity and
   * environment. A run the caller cannot see is left to the follow-up itself (404).
   */
  private async checkFollowupSecrets(caller: Caller, runId: string): Promise<void> {
    const run = await store.secretContext(this.db, visibility(caller), runId);
    if (!run) return;
    const config = run.agent_config as AgentConfig;
    const names = harnessAuthSecrets(config);
    for (const entry of Object.values(config.mcp_servers ?? {}) as Array<{ warp_id?: unknown }>) {
      if (typeof entry.warp_id === 'string')
        names.push(...((await this.options.mcpServers.secretsForRun(this.db, caller.teamUid, entry.warp_id)) ?? []));
    }
    const refused = await this.options.secrets.unusableSecrets(
      this.db,
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

  /**
   * Starts runs inside another slice's transaction `db` (the scheduler's, the automation evaluator's). Each
   * request is checked like an API create (an agent identity or environment may have gone since it was saved);
   * the ones that pass are inserted together, the others come back with the reason. Announce them with
   * announceQueued() once the transaction has committed.
   */
  async createWithin(db: Kysely<DB>, requests: RunRequest[]): Promise<Array<{ run_id: string } | ApiError>> {
    const runs: NewRun[] = [];
    const files: Array<[runId: string, attachments: NewAttachment[]]> = [];
    const outcomes: Array<{ run_id: string } | ApiError> = [];
    for (const request of requests) {
      try {
        const { run, attachments } = await this.prepare(db, request.owner, request.body, request.origin);
        const all = [...attachments, ...(request.files ?? [])];
        run.attachment_count = all.length;
        runs.push(run);
        files.push([run.id, all]);
        outcomes.push({ run_id: run.id });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        outcomes.push(error);
      }
    }
    const lifecycle = this.options.lifecycle.within(db);
    await lifecycle.insert(runs);
    for (const [runId, attachments] of files) await lifecycle.attach(runId, attachments);
    return outcomes;
  }

  /** Checks a create request against the caller's team and turns it into the row to insert. */
  private async prepare(
    db: Kysely<DB>,
    caller: Caller,
    body: CreateRunBody,
    origin: RunOrigin,
  ): Promise<{ run: NewRun; attachments: NewAttachment[] }> {
    const config: AgentConfig = { ...(body.config ?? {}) };
    const skillSpec = body.skill ?? config.skill_spec ?? null;
    if (skillSpec !== null && !SKILL_SPEC.test(skillSpec)) {
      throw invalidRequest(`skill "${skillSpec}" must look like repo:name or owner/repo:path/to/SKILL.md`);
    }
    if (skillSpec !== null && config.skills?.length)
      throw invalidRequest('config.skills and a skill spec cannot be used together');
    const harness = config.harness?.type;
    if (harness !== undefined && !this.options.harnessNames().includes(harness)) {
      throw invalidRequest(
        `config.harness.type "${harness}" is not a harness of this server; choose one of ${this.options.harnessNames().join(', ')}`,
      );
    }
    // A run naming a built-in harness takes its model from the catalogue, so a model it cannot use is refused now.
    // Without a harness type, the harness is decided where the run executes (an operator's harness reads model_id
    // as it likes), and a model the default harness cannot use fails the run when it starts.
    const modelId = config.harness?.model_id ?? config.model_id;
    if (harness !== undefined && isBuiltInHarness(harness) && modelId !== undefined) {
      const refusal = this.options.modelRefusal?.(modelId, harness, authSecretName(harness, config) !== undefined);
      if (refusal) throw refusal;
    }
    const prompt = body.prompt ?? '';
    if (prompt.trim() === '' && skillSpec === null) throw invalidRequest('prompt is required unless a skill is given');
    let agentSkill: NewRun['agent_skill'] = null;
    if (skillSpec !== null) {
      const skill = await this.options.skills.resolveSkill(caller.teamUid, skillSpec, db);
      if (!skill)
        throw invalidRequest(`skill "${skillSpec}" was not found in the repositories of this team's environments`);
      config.skill_spec = skill.id;
      // The skill's body is the base prompt, unless the request gives one explicitly.
      config.base_prompt ??= skill.base_prompt;
      agentSkill = { name: skill.name, description: skill.description, full_path: skill.full_path };
    }
    const mcpSecrets = config.mcp_servers
      ? await checkMcpServers(
          config.mcp_servers,
          (uid) => this.options.mcpServers.secretsForRun(db, caller.teamUid, uid),
          this.options.addressPolicy,
        )
      : [];
    const attachments = decodeAttachments(body);

    const who = visibility(caller);
    if (config.environment_id !== undefined) {
      if (!ENVIRONMENT_ID.test(config.environment_id)) {
        throw invalidRequest('config.environment_id must be 22 characters of [A-Za-z0-9]');
      }
      if (!(await this.options.environments.isAccessible(caller.teamUid, config.environment_id, db))) {
        throw notAuthorized(`environment ${config.environment_id} does not exist or this team cannot access it`);
      }
    }
    let parentMetadata: Record<string, string> = {};
    if (body.parent_run_id !== undefined) {
      const found = await store.runMetadata(db, who, body.parent_run_id);
      if (!found) throw invalidRequest(`parent run ${body.parent_run_id} does not exist or is not visible to you`);
      parentMetadata = found;
    }
    if (body.conversation_id !== undefined && !(await store.conversationExists(db, who, body.conversation_id))) {
      throw invalidRequest(`conversation ${body.conversation_id} does not exist or is not visible to you`);
    }
    if (caller.principal.available === false) {
      throw notAuthorized(
        `agent ${caller.principal.displayName} is over the team's plan limit and cannot execute runs`,
      );
    }
    // An agent's own key runs as that agent; a user may delegate to an agent with agent_identity_uid.
    let executor = { type: caller.principal.type, uid: caller.principal.uid };
    if (body.agent_identity_uid !== undefined) {
      const identity = await this.options.agents.findForRun(db, caller.teamUid, body.agent_identity_uid);
      if (!identity) throw notAuthorized(`agent identity ${body.agent_identity_uid} does not exist in this team`);
      if (!identity.available)
        throw notAuthorized(`agent identity ${identity.name} is over the team's plan limit and cannot execute runs`);
      executor = { type: 'service_account', uid: identity.uid };
      // The identity's worker is the default; the run's own config.worker_host (even "warp") wins.
      if (identity.worker_host) config.worker_host ??= identity.worker_host;
    } else if (caller.principal.type === 'service_account' && config.worker_host === undefined) {
      const self = await this.options.agents.findForRun(db, caller.teamUid, caller.principal.uid);
      if (self?.worker_host) config.worker_host = self.worker_host;
    }
    // A run's code can read every secret it is given: naming one is using it. The creator is the run's own, or the
    // user who saved the schedule or automation that starts it (their role is looked up as of now).
    const refused = await this.options.secrets.unusableSecrets(
      db,
      {
        teamUid: caller.teamUid,
        creatorUid: caller.principal.uid,
        agentUid: executor.type === 'service_account' ? executor.uid : null,
        environmentId: config.environment_id ?? null,
      },
      [...harnessAuthSecrets(config), ...mcpSecrets],
    );
    if (refused.length > 0) {
      throw notAuthorized(
        `this run would use team secret${refused.length > 1 ? 's' : ''} ${refused.join(', ')}, which ${refused.length > 1 ? 'are' : 'is'} not granted to you, ` +
          "to the run's agent identity or to its environment; a team admin can grant it (POST /secrets/{name}/grants)",
      );
    }
    const requestMetadata = body.metadata ?? {};
    const problem =
      metadataProblem(requestMetadata) ?? metadataProblem(mergeMetadata({}, parentMetadata, requestMetadata));
    if (problem) throw invalidRequest(problem);

    const id = randomUUID();
    const teamOwned = body.team ?? true;
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
      scope_uid: teamOwned ? caller.teamUid : caller.principal.uid,
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
      creator_type: caller.principal.type,
      creator_uid: caller.principal.uid,
      executor_type: executor.type,
      executor_uid: executor.uid,
      metadata: mergeMetadata({}, parentMetadata, requestMetadata),
      interactive: body.interactive ?? false,
      attachment_count: attachments.length,
    };
    return { run, attachments };
  }

  async get(caller: Caller, runId: string): Promise<RunItem> {
    const row = await store.findRun(this.db, visibility(caller), runId);
    if (!row) throw notFound(`run ${runId} not found`);
    return renderRun(row);
  }

  async list(caller: Caller, query: ListRunsQuery, metadataFilter: Record<string, string> | null) {
    const filters = await this.filtersFrom(caller, query, metadataFilter);
    const ordering = `${query.sort_by}:${query.sort_order}`;
    let after: CursorValue[] | null = null;
    if (query.cursor !== undefined) {
      try {
        after = this.options.cursors.decode(query.cursor, ordering);
      } catch (error) {
        if (error instanceof InvalidCursorError || error instanceof SyntaxError)
          throw invalidRequest(`cursor: ${error.message}`);
        throw error;
      }
      if (!Array.isArray(after) || after.length !== store.keyWidth(query.sort_by))
        throw invalidRequest('cursor: malformed position');
    }
    const rows = await store.listRuns(this.db, visibility(caller), filters, {
      sortBy: query.sort_by,
      order: query.sort_order,
      after,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const hasNext = rows.length > query.limit;
    const last = page[page.length - 1];
    return {
      runs: page.map(renderRun),
      page_info: {
        has_next_page: hasNext,
        next_cursor:
          hasNext && last
            ? this.options.cursors.encode({ ordering, values: store.sortKey(last, query.sort_by) })
            : undefined,
      },
    };
  }

  private async filtersFrom(
    caller: Caller,
    query: ListRunsQuery,
    metadataFilter: Record<string, string> | null,
  ): Promise<store.RunFilters> {
    if (metadataFilter !== null) {
      if (!this.options.metadataFiltering) {
        throw featureNotAvailable('metadata filtering is not enabled on this server');
      }
      const pairs = Object.entries(metadataFilter);
      if (pairs.length > MAX_METADATA_FILTER_PAIRS) {
        throw invalidRequest(`at most ${MAX_METADATA_FILTER_PAIRS} metadata filters are allowed, got ${pairs.length}`);
      }
      for (const [key, value] of pairs) {
        const problem = metadataPairProblem(key, value);
        if (problem) throw invalidRequest(problem);
      }
    }
    if (query.skill !== undefined && query.skill_spec !== undefined && query.skill !== query.skill_spec) {
      throw invalidRequest('skill and skill_spec are the same filter; give one, or the same value');
    }
    if (
      query.ancestor_run_id !== undefined &&
      !(await store.runExists(this.db, visibility(caller), query.ancestor_run_id))
    ) {
      throw invalidRequest(`ancestor run ${query.ancestor_run_id} does not exist or is not visible to you`);
    }
    const q = query.q?.trim();
    return {
      states: query.state,
      configName: query.name,
      modelId: query.model_id,
      creator: query.creator,
      executor: query.executor,
      source: query.source,
      executionLocation: query.execution_location,
      createdAfter: query.created_after,
      createdBefore: query.created_before,
      updatedAfter: query.updated_after,
      environmentId: query.environment_id === EMPTY_ENVIRONMENT ? null : query.environment_id,
      skillSpec: query.skill_spec ?? query.skill,
      scheduleId: query.schedule_id,
      ancestorRunId: query.ancestor_run_id,
      metadata: metadataFilter ?? undefined,
      artifactType: query.artifact_type,
      query: q ? q : undefined,
    };
  }

  async cancel(caller: Caller, runId: string): Promise<string> {
    const who = visibility(caller);
    const run = await store.findRun(this.db, who, runId);
    if (!run) throw notFound(`run ${runId} not found`);
    const refusal = cancelRefusal(run);
    if (refusal) throw refusal;
    if (await this.options.lifecycle.cancel(who, runId, caller.principal.displayName)) return runId;
    // Lost a race (another cancel, or the run moved on): answer for the state it is in now.
    const now = await store.findRun(this.db, who, runId);
    throw (now && cancelRefusal(now)) ?? conflict('the run changed state; retry', { retryable: true });
  }

  /**
   * An instance administrator stops a run of any team and any kind (self-hosted ones included, which the API's
   * cancel refuses), also while it is being prepared. The engine or worker holding it stops it.
   */
  async cancelAsOperator(principal: Principal, runId: string): Promise<string> {
    const { lifecycle } = this.options;
    if (await lifecycle.cancel('operator', runId, principal.displayName, OPERATOR_CANCELLABLE_STATES)) return runId;
    const run = await this.db.selectFrom('runs').select('state').where('id', '=', runId).executeTakeFirst();
    if (!run) throw notFound(`run ${runId} not found`);
    throw invalidRequest(`the run has already ended (${run.state})`);
  }

  async timeline(caller: Caller, runId: string) {
    if (!(await store.runExists(this.db, visibility(caller), runId))) throw notFound(`run ${runId} not found`);
    const events = await store.listEvents(this.db, runId);
    return { events: events.map(renderEvent) };
  }
}
