import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import { newUid } from '../../platform/crypto.js';
import { withConflicts } from '../../platform/db/conflicts.js';
import { conflict, invalidRequest, notAuthorized, notFound } from '../../platform/http/errors.js';
import { rfc3339 as iso } from '../../platform/time.js';
import type { Caller } from '../caller.js';
import type { AgentItem, CreateAgentBody, UpdateAgentBody } from './schemas.js';
import * as store from './store.js';

export interface AgentsServiceOptions {
  db: Kysely<DB>;
  planMaxAgents: number;
  /** Whether the team may use this environment (owned or shared with it). */
  environmentAccessible: (teamUid: string, environmentId: string) => Promise<boolean>;
  /** The names among `names` that are not secrets of the team. */
  missingSecrets: (teamUid: string, names: string[]) => Promise<string[]>;
  /** Whether the model catalogue has `modelId` (a model the server does not know could never run). */
  knownModel: (modelId: string) => boolean;
  /** Whether the team has the runner (a default_runner_uid must name one of the team's own). */
  runnerExists?: (db: Kysely<DB>, teamUid: string, uid: string) => Promise<boolean>;
}

function render(row: store.AgentRow): AgentItem {
  return {
    uid: row.uid,
    name: row.name,
    ...(row.description ? { description: row.description } : {}),
    ...(row.prompt ? { prompt: row.prompt } : {}),
    ...(row.environment_id ? { environment_id: row.environment_id } : {}),
    ...(row.base_model ? { base_model: row.base_model } : {}),
    ...(row.worker_host ? { worker_host: row.worker_host } : {}),
    skills: row.skills,
    secrets: row.secrets,
    ...(row.mcp_servers ? { mcp_servers: row.mcp_servers as AgentItem['mcp_servers'] } : {}),
    ...(row.harness ? { harness: row.harness as AgentItem['harness'] } : {}),
    available: row.available,
    on_behalf_of_enabled: row.on_behalf_of_enabled,
    agent_type: row.agent_type,
    ...(row.harness_auth_secrets ? { harness_auth_secrets: row.harness_auth_secrets } : {}),
    ...(row.credential_strategy ? { credential_strategy: row.credential_strategy } : {}),
    default_runner_uid: row.default_runner_uid ?? '',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The harnesses' sign-in secrets as stored: blank names left out, none at all as nothing. */
function secretsByHarness(secrets: CreateAgentBody['harness_auth_secrets']): Record<string, string> | null {
  const named = Object.entries(secrets ?? {}).filter(([, name]) => typeof name === 'string' && name.trim() !== '');
  return named.length ? Object.fromEntries(named.map(([harness, name]) => [harness, (name as string).trim()])) : null;
}

/** `""`, `[]` and `{}` clear a field on update; they are stored as nothing. */
const emptyToNull = <T>(value: T): T | null => {
  if (value === '' || (Array.isArray(value) && value.length === 0)) return null;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
    return null;
  return value;
};

export class AgentsService {
  constructor(private readonly options: AgentsServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  private requireAdmin(caller: Caller): void {
    if (caller.role !== 'admin') throw notAuthorized('managing agent identities needs the team admin role');
  }

  private async check(caller: Caller, values: store.AgentValues, db: Kysely<DB> = this.db): Promise<store.AgentValues> {
    if (values.name.trim() === '') throw invalidRequest('name must not be blank');
    const runner = values.default_runner_uid;
    // Another team's runner is answered as a missing one: its name tells nothing of other teams.
    if (runner && !(await this.options.runnerExists?.(db, caller.teamUid, runner)))
      throw invalidRequest(
        `default_runner_uid: runner ${runner} does not exist in this team; \`hangar runners list\` (GET /runners) lists them`,
      );
    if (
      values.environment_id !== null &&
      !(await this.options.environmentAccessible(caller.teamUid, values.environment_id))
    ) {
      throw notAuthorized(`environment ${values.environment_id} does not exist or this team cannot access it`);
    }
    const secretNames = values.secrets.map((secret) => secret.name);
    if (new Set(secretNames).size !== secretNames.length) throw invalidRequest('secrets lists a name twice');
    // A harness's sign-in secret must be the team's too (its value is read when the run starts, never shown).
    for (const name of Object.values(values.harness_auth_secrets ?? {})) secretNames.push(name);
    const missing = await this.options.missingSecrets(caller.teamUid, [...new Set(secretNames)]);
    if (missing.length > 0) throw invalidRequest(`secrets names ${missing.join(', ')}, which this team does not have`);
    for (const [field, modelId] of [
      ['base_model', values.base_model],
      ['harness.model_id', values.harness?.model_id],
    ] as const) {
      if (typeof modelId === 'string' && modelId !== '' && !this.options.knownModel(modelId))
        throw invalidRequest(
          `${field}: model ${modelId} is not in this server's catalogue; \`hangar models\` (GET /agent/models) lists the models`,
        );
    }
    return { ...values, name: values.name.trim() };
  }

  async create(caller: Caller, body: CreateAgentBody): Promise<AgentItem> {
    this.requireAdmin(caller);
    const values = await this.check(caller, {
      name: body.name,
      description: emptyToNull(body.description ?? null),
      prompt: emptyToNull(body.prompt ?? null),
      environment_id: emptyToNull(body.environment_id ?? null),
      base_model: emptyToNull(body.base_model ?? null),
      worker_host: emptyToNull(body.worker_host ?? null),
      skills: body.skills ?? [],
      secrets: body.secrets ?? [],
      mcp_servers: emptyToNull(body.mcp_servers ?? null),
      harness: emptyToNull(body.harness ?? null),
      on_behalf_of_enabled: body.on_behalf_of_enabled ?? false,
      default_runner_uid: emptyToNull(body.default_runner_uid ?? null),
      agent_type: body.agent_type ?? 'CUSTOM',
      harness_auth_secrets: secretsByHarness(body.harness_auth_secrets),
      credential_strategy: body.credential_strategy ?? null,
    });
    const uid = newUid();
    await withConflicts(
      store.insertAgent(this.db, { ...values, uid, team_uid: caller.teamUid, created_by_uid: caller.principal.uid }),
      nameTaken(values.name),
    );
    return this.get(caller, uid);
  }

  async list(caller: Caller, factoryUids?: string[]): Promise<{ agents: AgentItem[] }> {
    return {
      agents: (await store.listAgents(this.db, caller.teamUid, this.options.planMaxAgents, factoryUids)).map(render),
    };
  }

  async get(caller: Caller, uid: string): Promise<AgentItem> {
    const row = await store.findAgent(this.db, caller.teamUid, uid, this.options.planMaxAgents);
    if (!row) throw notFound(`agent identity ${uid} not found`);
    return render(row);
  }

  async update(caller: Caller, uid: string, body: UpdateAgentBody): Promise<AgentItem> {
    this.requireAdmin(caller);
    const current = await store.findAgent(this.db, caller.teamUid, uid, this.options.planMaxAgents);
    if (!current) throw notFound(`agent identity ${uid} not found`);
    const pick = <K extends keyof UpdateAgentBody & keyof store.AgentValues>(key: K, now: store.AgentValues[K]) =>
      body[key] === undefined || body[key] === null ? now : (emptyToNull(body[key]) as store.AgentValues[K]);
    const values = await this.check(caller, {
      name: body.name ?? current.name,
      description: pick('description', current.description),
      prompt: pick('prompt', current.prompt),
      environment_id: pick('environment_id', current.environment_id),
      base_model: pick('base_model', current.base_model),
      worker_host: pick('worker_host', current.worker_host),
      skills: pick('skills', current.skills) ?? [],
      secrets: pick('secrets', current.secrets) ?? [],
      mcp_servers: pick('mcp_servers', current.mcp_servers),
      harness: pick('harness', current.harness),
      on_behalf_of_enabled: body.on_behalf_of_enabled ?? current.on_behalf_of_enabled,
      default_runner_uid: pick('default_runner_uid', current.default_runner_uid),
      agent_type: body.agent_type ?? current.agent_type,
      harness_auth_secrets:
        body.harness_auth_secrets === undefined || body.harness_auth_secrets === null
          ? current.harness_auth_secrets
          : secretsByHarness(body.harness_auth_secrets),
      credential_strategy:
        body.credential_strategy === undefined || body.credential_strategy === null
          ? current.credential_strategy
          : body.credential_strategy || null,
    });
    await withConflicts(store.updateAgent(this.db, caller.teamUid, uid, values), nameTaken(values.name));
    return this.get(caller, uid);
  }

  async delete(caller: Caller, uid: string): Promise<void> {
    this.requireAdmin(caller);
    const row = await store.findAgent(this.db, caller.teamUid, uid, this.options.planMaxAgents);
    // A factory's foreman is where the work sent to the factory goes: its definition removes it, not this call.
    if (row?.factory_uid && row.agent_type === 'FOREMAN')
      throw invalidRequest(
        `agent identity ${uid} is the foreman of factory ${row.factory_uid}, which takes the work sent to it; remove it from the factory's definition and apply it`,
      );
    if (!(await store.deleteAgent(this.db, caller.teamUid, uid))) throw notFound(`agent identity ${uid} not found`);
  }

  /**
   * Factory definitions manage agents inside their apply transaction `db`: the same checks as the API, and the
   * agent is marked with its factory so that the next apply knows it.
   */
  async saveManaged(
    db: Kysely<DB>,
    caller: Caller,
    factoryUid: string,
    uid: string | null,
    values: store.AgentValues,
  ): Promise<string> {
    const checked = await this.check(caller, values, db);
    if (uid !== null) {
      await store.updateAgent(db, caller.teamUid, uid, checked);
      return uid;
    }
    const created = newUid();
    await store.insertAgent(db, {
      ...checked,
      // Factory definitions name the agent their work goes to `foreman` (factory/dispatch.ts): it is their FOREMAN.
      agent_type: checked.agent_type ?? (checked.name === 'foreman' ? 'FOREMAN' : undefined),
      uid: created,
      team_uid: caller.teamUid,
      created_by_uid: caller.principal.uid,
      factory_uid: factoryUid,
    });
    return created;
  }

  async deleteManaged(db: Kysely<DB>, teamUid: string, uid: string): Promise<void> {
    await store.deleteAgent(db, teamUid, uid);
  }

  managedBy(db: Kysely<DB>, teamUid: string, factoryUid: string) {
    return store.agentsOfFactory(db, teamUid, factoryUid);
  }

  /** For run creation and schedules: the agent if it belongs to the team, with its availability. */
  async findForRun(
    db: Kysely<DB>,
    teamUid: string,
    uid: string,
  ): Promise<
    | {
        uid: string;
        name: string;
        available: boolean;
        worker_host: string | null;
        factory_uid: string | null;
        on_behalf_of_enabled: boolean;
        default_runner_uid: string | null;
        credential_strategy: 'CREATOR' | 'EXECUTOR' | null;
      }
    | undefined
  > {
    const row = await store.findAgent(db, teamUid, uid, this.options.planMaxAgents);
    return (
      row && {
        uid: row.uid,
        name: row.name,
        available: row.available,
        worker_host: row.worker_host,
        factory_uid: row.factory_uid,
        on_behalf_of_enabled: row.on_behalf_of_enabled,
        default_runner_uid: row.default_runner_uid,
        credential_strategy: row.credential_strategy,
      }
    );
  }
}

/**
 * Names are unique per team among the agents made through the API, and within each factory definition (migration
 * 0019), as webhooks' are within their factory.
 */
function nameTaken(name: string) {
  return {
    agent_identities_team_name: () => conflict(`an agent identity named "${name}" already exists in this team`),
  };
}
