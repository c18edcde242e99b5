import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { notFound } from '../platform/http/errors.js';
import { rfc3339 } from '../platform/time.js';
import type { DispatchBody, DispatchResponse, PublicFactory } from './public-schemas.js';
import * as store from './store.js';
import { isFactoryUid } from './uid.js';

/** The agent of a factory's definition that takes the work sent to the factory (agents/foreman/agent.md). */
export const FOREMAN = 'foreman';

export interface FactoryDispatchOptions {
  db: Kysely<DB>;
  /** The agents a factory's definition manages (the identities slice's). */
  agentsOf(teamUid: string, factoryUid: string): Promise<Array<{ uid: string; name: string }>>;
  /** Creates a run as `caller` would through POST /agent/runs (the runs slice's). */
  createRun(
    caller: Caller,
    body: { prompt: string; title?: string; agent_identity_uid?: string; metadata: Record<string, string> },
  ): Promise<{ run_id: string; state: string }>;
  /** The run's page in the dashboard. */
  runUrl(runId: string): string;
}

/** The public factory API: find a team's factories and send one work (GET /factory, POST /factory/{uid}/runs). */
export class FactoryDispatch {
  constructor(private readonly options: FactoryDispatchOptions) {}

  async list(
    caller: Caller,
    search?: string,
  ): Promise<{ factories: PublicFactory[]; page_info: { has_next_page: boolean } }> {
    await store.defaultFactory(this.options.db, caller.teamUid);
    const rows = await store.searchFactories(this.options.db, caller.teamUid, search?.trim() || undefined);
    const factories = await Promise.all(rows.map((row) => this.render(row)));
    return { factories, page_info: { has_next_page: false } };
  }

  async get(caller: Caller, uid: string): Promise<PublicFactory> {
    return this.render(await this.find(caller, uid));
  }

  /**
   * A run for the factory's foreman (or, without one, a run of the team as POST /agent/runs makes it) with the
   * prompt as given, stamped with the ticket: `ticket_source` and `ticket_id` from the reference, `ticket_url`.
   */
  async dispatch(caller: Caller, uid: string, body: DispatchBody): Promise<DispatchResponse> {
    const factory = await this.find(caller, uid);
    const foreman = await this.foreman(factory);
    const ticketRef = body.ticket_ref ?? `adhoc:${randomBytes(9).toString('base64url')}`;
    const colon = ticketRef.indexOf(':');
    const metadata: Record<string, string> = {
      ticket_source: ticketRef.slice(0, colon),
      ticket_id: ticketRef.slice(colon + 1),
      ...(body.ticket_url ? { ticket_url: body.ticket_url } : {}),
    };
    const run = await this.options.createRun(caller, {
      prompt: body.prompt,
      ...(body.title ? { title: body.title } : {}),
      ...(foreman ? { agent_identity_uid: foreman.uid } : {}),
      metadata,
    });
    return {
      factory_uid: factory.uid,
      foreman_agent: foreman?.name ?? '',
      run_id: run.run_id,
      state: run.state,
      ticket_ref: ticketRef,
      run_url: this.options.runUrl(run.run_id),
    };
  }

  /** Another team's factory is missing, exactly as one that does not exist. */
  private async find(caller: Caller, uid: string): Promise<store.FactoryRow> {
    const row = isFactoryUid(uid) ? await store.findFactory(this.options.db, caller.teamUid, uid) : undefined;
    if (!row) throw notFound(`factory ${uid} not found`);
    return row;
  }

  private async foreman(factory: store.FactoryRow) {
    const agents = await this.options.agentsOf(factory.team_uid, factory.uid);
    return agents.find((agent) => agent.name === FOREMAN);
  }

  private async render(row: store.FactoryRow): Promise<PublicFactory> {
    const foreman = await this.foreman(row);
    return {
      uid: row.uid,
      name: row.name,
      description: row.description,
      team_uid: row.team_uid,
      created_at: rfc3339(row.created_at),
      updated_at: rfc3339(row.updated_at),
      is_default: row.is_default,
      foreman_agent: foreman?.name ?? null,
      alias: null,
      avatar_url: null,
      // Environments clone from the git host Hangar is configured with, GitHub or one that speaks like it.
      code_forge: 'GITHUB',
      code_forges: ['GITHUB'],
      // Each execution's GitHub token is the team's (its App installation or PAT), not the creator's.
      credential_strategy: 'EXECUTOR',
      default_environment: null,
      default_model: null,
      integrations: null,
      repositories: [],
      agent_defaults: { default_runner_uid: '', mcp_servers: {}, secrets: [], worker_host: '' },
      scorer_defaults: {},
      scoring: { default_model: null },
    };
  }
}
