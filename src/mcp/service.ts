import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { newUid } from '../platform/crypto.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { conflict, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import type { AddressPolicy } from '../platform/net/address-policy.js';
import { rfc3339 as iso } from '../platform/time.js';
import type { SecretsService } from '../secrets/index.js';
import {
  definitionFrom,
  type McpDefinition,
  type ResolvedDefinition,
  secretKeys,
  secretNames,
  withSecretValues,
} from './definition.js';
import type { McpServerBody, McpServerItem } from './schemas.js';
import * as store from './store.js';

export interface McpServersServiceOptions {
  db: Kysely<DB>;
  secrets: SecretsService;
  /** Where an HTTP server may be; checked again whenever Hangar's server connects to one. */
  addressPolicy: AddressPolicy;
}

/** The 409 of a create or rename onto a name the team already uses. */
const nameTaken = (name: string) => ({
  mcp_servers_team_uid_name_key: () => conflict(`this team already has an MCP server named ${name}`),
});

/** A server ready to start for a run: secret references replaced by their values. Never send it to a client. */
/** `secret_names`: the keys whose values came from team secrets, with the secrets' names (for their redaction). */
export type ResolvedMcpServer = {
  uid: string;
  name: string;
  secret_names: Record<string, string>;
} & ResolvedDefinition;

function render(row: store.McpServerRow, viewerTeamUid: string): McpServerItem {
  const owned = row.team_uid === viewerTeamUid;
  return {
    uid: row.uid,
    name: row.name,
    ...row.definition,
    owner_team_uid: row.team_uid,
    ...(owned ? { shared_with: row.shared_with } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/**
 * MCP server definitions a team keeps once and uses in runs by uid (`{"warp_id": uid}`), and may share with
 * other teams. The owning team changes them; teams it is shared with can see and use them, secrets included.
 */
export class McpServersService {
  constructor(private readonly options: McpServersServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  /**
   * The checked definition; every secret it refers to must exist in the team and be one the caller may use in
   * runs: otherwise a member could wire a secret into a command of their own (or into an admin's server) and read
   * it from the next run that uses the server.
   */
  private async definition(caller: Caller, body: McpServerBody): Promise<McpDefinition> {
    const definition = definitionFrom(body);
    if ('url' in definition) {
      const refusal = await this.options.addressPolicy.refusalOfUrl(definition.url);
      if (refusal) throw invalidRequest(`url is refused: ${refusal}`);
    }
    const names = secretNames(definition);
    const missing = await this.options.secrets.missingSecrets(caller.teamUid, names);
    if (missing.length > 0)
      throw invalidRequest(
        `no team secret named ${missing.join(', ')}; create it first with \`hangar secrets set <name>\` (POST /secrets)`,
      );
    const refused = await this.options.secrets.unusableSecrets(
      this.db,
      {
        teamUid: caller.teamUid,
        creatorUid: caller.principal.uid,
        agentUid: caller.principal.type === 'service_account' ? caller.principal.uid : null,
        environmentId: null,
      },
      names,
    );
    if (refused.length > 0) {
      throw notAuthorized(
        `team secret ${refused.join(', ')} is not granted to you; a team admin can grant it with \`hangar secrets grant <name> --member <uid>\` (POST /secrets/{name}/grants) or define this server`,
      );
    }
    return definition;
  }

  /** A server the caller's team may see, and whether it owns it; 404 for anything else (existence not leaked). */
  private async visible(caller: Caller, uid: string): Promise<{ row: store.McpServerRow; owned: boolean }> {
    const row = await store.findVisible(this.db, caller.teamUid, uid);
    if (!row) throw notFound(`MCP server ${uid} not found`);
    return { row, owned: row.team_uid === caller.teamUid };
  }

  private async owned(caller: Caller, uid: string, action: string): Promise<store.McpServerRow> {
    const { row, owned } = await this.visible(caller, uid);
    if (!owned)
      throw notAuthorized(`MCP server ${uid} is shared with this team; only its owning team can ${action} it`);
    return row;
  }

  async create(caller: Caller, body: McpServerBody): Promise<McpServerItem> {
    const definition = await this.definition(caller, body);
    const uid = newUid();
    await withConflicts(
      store.insertServer(this.db, { uid, team_uid: caller.teamUid, name: body.name, definition }),
      nameTaken(body.name),
    );
    return this.get(caller, uid);
  }

  async list(caller: Caller): Promise<{ mcp_servers: McpServerItem[] }> {
    const rows = await store.listVisible(this.db, caller.teamUid);
    return { mcp_servers: rows.map((row) => render(row, caller.teamUid)) };
  }

  async get(caller: Caller, uid: string): Promise<McpServerItem> {
    return render((await this.visible(caller, uid)).row, caller.teamUid);
  }

  /** Replaces the name and the whole definition. */
  async update(caller: Caller, uid: string, body: McpServerBody): Promise<McpServerItem> {
    await this.owned(caller, uid, 'change');
    const definition = await this.definition(caller, body);
    const updated = await withConflicts(
      store.updateServer(this.db, caller.teamUid, uid, { name: body.name, definition }),
      nameTaken(body.name),
    );
    if (!updated) throw notFound(`MCP server ${uid} not found`);
    return this.get(caller, uid);
  }

  async delete(caller: Caller, uid: string): Promise<void> {
    await this.owned(caller, uid, 'delete');
    if (!(await store.deleteServer(this.db, caller.teamUid, uid))) throw notFound(`MCP server ${uid} not found`);
  }

  private async ownedByAdmin(caller: Caller, uid: string): Promise<store.McpServerRow> {
    const row = await this.owned(caller, uid, 'share');
    if (caller.role !== 'admin') throw notAuthorized('sharing an MCP server needs the admin role in its owning team');
    return row;
  }

  async share(caller: Caller, uid: string, teamUid: string): Promise<McpServerItem> {
    await this.ownedByAdmin(caller, uid);
    if (teamUid === caller.teamUid)
      throw invalidRequest('an MCP server is always available to its owning team; share it with another team');
    if ((await store.insertShare(this.db, uid, teamUid)) === 'unknown_team')
      throw invalidRequest(`team ${teamUid} does not exist`);
    return this.get(caller, uid);
  }

  async unshare(caller: Caller, uid: string, teamUid: string): Promise<void> {
    await this.ownedByAdmin(caller, uid);
    if (!(await store.deleteShare(this.db, uid, teamUid)))
      throw notFound(`MCP server ${uid} is not shared with team ${teamUid}`);
  }

  /**
   * Whether a run of `teamUid` may use the server (owned or shared: null when not), and which of the team's
   * secrets it then hands to the run: the ones it refers to when the team owns it, none when another team shares
   * it (its own secrets, which that team's admins chose to share). `db` is the caller's connection or
   * transaction: the scheduler asks from inside its own (PGlite has a single connection).
   */
  async secretsForRun(db: Kysely<DB>, teamUid: string, uid: string): Promise<string[] | null> {
    const row = await store.findVisible(db, teamUid, uid);
    if (!row) return null;
    return row.team_uid === teamUid ? secretNames(row.definition) : [];
  }

  /**
   * The server as a run of `teamUid` starts it, with the owning team's secret values filled in. For the
   * execution engine only: what it returns must never reach an API response or a log line.
   */
  async resolveForRun(teamUid: string, uid: string): Promise<ResolvedMcpServer> {
    const row = await store.findVisible(this.db, teamUid, uid);
    if (!row) throw notAuthorized(`MCP server ${uid} does not exist or this team cannot use it`);
    const values = new Map<string, string>();
    for (const name of secretNames(row.definition)) {
      const value = await this.options.secrets.readSecretValue(row.team_uid, name);
      if (value === null)
        throw invalidRequest(`MCP server ${row.name} uses secret ${name}, which its owning team no longer has`);
      values.set(name, value);
    }
    return {
      uid: row.uid,
      name: row.name,
      ...withSecretValues(row.definition, values),
      secret_names: secretKeys(row.definition),
    };
  }
}
