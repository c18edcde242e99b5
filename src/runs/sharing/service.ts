// Runs' share links (config.session_sharing, docs/api.md "Sharing a run"): a link for people without an API key to
// one run, VIEWER (its page, conversation and timeline) or EDITOR (also follow-ups). The link's secret is shown once
// and kept as a hash; the run a link opens is the link's own (no request names a run), so it reaches nothing else.
// A wrong, revoked or orphaned secret is one answer (404) and costs the address a failed authentication.
import type { Kysely } from 'kysely';
import type { DB } from '../../database.js';
import { type Caller, roleInTeam } from '../../identities/index.js';
import { notAuthorized, notFound } from '../../platform/http/errors.js';
import { rfc3339 } from '../../platform/time.js';
import type { EnvironmentDirectory, McpServerDirectory, SecretAccess } from '../collaborators.js';
import type { RunLifecycle } from '../lifecycle/run-lifecycle.js';
import type { RunOutputs } from '../output.js';
import { type RenderContext, renderEvent, renderRun } from '../render.js';
import { checkFollowupSecrets } from '../run-secrets.js';
import type { FollowupBody, ShareAccess } from '../schemas.js';
import * as runStore from '../store.js';
import { callerVisibility, type Visibility } from '../visibility.js';
import { isShareSecret, shareUrl } from './secret.js';
import { activeLink, linkBySecret, replaceLink, revokeLink, type ShareLinkRow } from './store.js';
import { type SharedRun, sharedRun } from './view.js';

/** The audit log's entry, as the audit slice records it (audit/store.ts AuditEntry). */
export interface ShareAuditEntry {
  teamUid: string | null;
  actorType: string;
  actorUid: string;
  keyUid: string | null;
  clientAddress: string | null;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
}

/** The failed-authentication throttle (identities/auth-throttle.ts): a wrong link costs what a wrong key does. */
export interface ShareLookupThrottle {
  refuseIfBlocked(address: string): void;
  failed(address: string): Promise<void>;
}

export interface RunSharingOptions {
  db: Kysely<DB>;
  lifecycle: RunLifecycle;
  outputs: RunOutputs;
  access: { mcpServers: McpServerDirectory; secrets: SecretAccess; environments: EnvironmentDirectory };
  publicUrl: () => string;
  throttle: ShareLookupThrottle;
  audit: { record(entry: ShareAuditEntry): Promise<void> };
}

/** A link as the run's owners see it; `url` only when it was just made. */
export interface ShareLinkView {
  public_access: ShareAccess;
  created_at: string;
  created_by: { type: string; uid: string };
  url?: string;
}

/** The actor an EDITOR link's follow-up is recorded as, in the audit log and on the run's timeline. */
export const SHARED_LINK_ACTOR = 'shared_link';

const NO_LINK = 'no such share link: it was revoked, its run was deleted, or it never existed';

function view(row: ShareLinkRow, url?: string): ShareLinkView {
  return {
    public_access: row.public_access,
    created_at: rfc3339(row.created_at),
    created_by: { type: row.created_by_type, uid: row.created_by_uid },
    ...(url ? { url } : {}),
  };
}

type ResolvedLink = ShareLinkRow & { creator_uid: string; creator_type: string };

export class RunSharing {
  constructor(private readonly options: RunSharingOptions) {}

  private get db() {
    return this.options.db;
  }

  /**
   * Makes the run's link as `by` (a new run's config.session_sharing, or PUT .../sharing): any link it had stops
   * working. Audited as run.share.create.
   */
  async open(
    run: { id: string; teamUid: string },
    access: ShareAccess,
    by: { type: string; uid: string; keyUid: string | null },
    clientAddress: string | null,
  ): Promise<ShareLinkView> {
    const { row, secret } = await replaceLink(this.db, { runId: run.id, teamUid: run.teamUid, access, by });
    await this.options.audit.record({
      teamUid: run.teamUid,
      actorType: by.type,
      actorUid: by.uid,
      keyUid: by.keyUid,
      clientAddress,
      action: 'run.share.create',
      target: run.id,
      details: { fields: { public_access: access } },
    });
    return view(row, shareUrl(this.options.publicUrl(), secret));
  }

  /** The run's active link (never its URL), for those who see the run; 404 when it has none. */
  async current(caller: Caller, runId: string): Promise<ShareLinkView> {
    await this.visibleRun(caller, runId);
    const row = await activeLink(this.db, runId);
    if (!row) throw notFound(`run ${runId} has no share link`);
    return view(row);
  }

  /** A new link for the run (its creator or a team administrator); the previous one stops working. */
  async share(caller: Caller, runId: string, access: ShareAccess, clientAddress: string | null) {
    const run = await this.manageableRun(caller, runId);
    return this.open({ id: run.id, teamUid: run.team_uid }, access, principalOf(caller), clientAddress);
  }

  /** Revokes the run's link (its creator or a team administrator): it answers 404 from then on. */
  async revoke(caller: Caller, runId: string, clientAddress: string | null): Promise<ShareLinkView> {
    const run = await this.manageableRun(caller, runId);
    const row = await revokeLink(this.db, runId, caller.principal.uid);
    if (!row) throw notFound(`run ${runId} has no share link`);
    await this.options.audit.record({
      teamUid: run.team_uid,
      actorType: caller.principal.type,
      actorUid: caller.principal.uid,
      keyUid: caller.principal.keyUid ?? null,
      clientAddress,
      action: 'run.share.revoke',
      target: runId,
      details: { fields: { public_access: row.public_access } },
    });
    return view(row);
  }

  /** The run as the link shows it. */
  async run(secret: string, address: string): Promise<SharedRun> {
    const link = await this.resolve(secret, address);
    const row = await runStore.findRun(this.db, visibilityOf(link), link.run_id);
    if (!row) throw notFound(NO_LINK);
    const context: RenderContext = { publicUrl: this.options.publicUrl() };
    return sharedRun(renderRun(row, context), link.public_access);
  }

  async conversation(secret: string, address: string) {
    const link = await this.resolve(secret, address);
    return this.options.outputs.runOwnConversation(visibilityOf(link), link.run_id);
  }

  async timeline(secret: string, address: string) {
    const link = await this.resolve(secret, address);
    const events = await runStore.listEvents(this.db, link.run_id);
    return { events: events.map(renderEvent) };
  }

  /**
   * An EDITOR link's follow-up, made as the run's creator would (their right to the run's secrets is checked as for
   * any follow-up), recorded as made through the link: `via: shared_link` on its timeline entry and an audit entry
   * run.followup of the actor `shared_link` (the link's ID).
   */
  async followup(secret: string, address: string, body: FollowupBody): Promise<Record<string, never>> {
    const link = await this.resolve(secret, address);
    if (link.public_access !== 'EDITOR')
      throw notAuthorized('this share link is read-only (VIEWER): it cannot send follow-ups');
    // A follow-up is the creator's act: once a person has left the team, their links steer nothing.
    if (link.creator_type === 'user' && (await roleInTeam(this.db, link.team_uid, link.creator_uid)) === undefined)
      throw notAuthorized("the run's creator is no longer a member of its team: this link cannot send follow-ups");
    const asCreator: Caller = {
      teamUid: link.team_uid,
      role: 'member',
      principal: {
        type: link.creator_type === 'service_account' ? 'service_account' : 'user',
        uid: link.creator_uid,
        displayName: 'shared link',
        email: null,
        isAdmin: false,
        memberships: [],
      },
    };
    await checkFollowupSecrets(this.db, this.options.access, asCreator, link.run_id);
    await this.options.lifecycle.followup(visibilityOf(link), link.run_id, body.message ?? '', body.mode, {
      via: SHARED_LINK_ACTOR,
    });
    await this.options.audit.record({
      teamUid: link.team_uid,
      actorType: SHARED_LINK_ACTOR,
      actorUid: link.id,
      keyUid: null,
      clientAddress: address,
      action: 'run.followup',
      target: link.run_id,
      details: { fields: { public_access: link.public_access, on_behalf_of: link.creator_uid } },
    });
    return {};
  }

  /** The active link of this secret; anything else is one 404 that counts as a failed authentication. */
  private async resolve(secret: string | undefined, address: string): Promise<ResolvedLink> {
    this.options.throttle.refuseIfBlocked(address);
    const link = secret !== undefined && isShareSecret(secret) ? await linkBySecret(this.db, secret) : undefined;
    if (!link) {
      await this.options.throttle.failed(address);
      throw notFound(NO_LINK);
    }
    return link;
  }

  private async visibleRun(caller: Caller, runId: string) {
    const run = await runStore.findRun(this.db, callerVisibility(caller), runId);
    if (!run) throw notFound(`run ${runId} not found`);
    return run;
  }

  private async manageableRun(caller: Caller, runId: string) {
    const run = await this.visibleRun(caller, runId);
    if (caller.role !== 'admin' && run.creator_uid !== caller.principal.uid)
      throw notAuthorized("only the run's creator or a team administrator may share it or revoke its link");
    return run;
  }
}

function principalOf(caller: Caller) {
  return { type: caller.principal.type, uid: caller.principal.uid, keyUid: caller.principal.keyUid ?? null };
}

/** A link sees its run as its creator does (a personal run included), and only that run is ever asked for. */
function visibilityOf(link: ResolvedLink): Visibility {
  return { teamUid: link.team_uid, principalUid: link.creator_uid };
}
