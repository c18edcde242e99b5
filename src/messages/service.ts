import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { invalidRequest, notFound } from '../platform/http/errors.js';
import type { RunEventItem } from '../runs/index.js';
import { actorOf, type Credential, type PlacesOf, reachable, reaches } from './access.js';
import type { FullMessage, MessageHeader, ReportEventBody, SendMessageBody } from './schemas.js';
import * as store from './store.js';

export interface MessagesServiceOptions {
  db: Kysely<DB>;
  placesOf: PlacesOf;
  eventsSince(runIds: readonly string[], since: number, limit: number): Promise<RunEventItem[]>;
  reportEvent(event: { runId: string; executionId: number; eventType: string; refId: string | null }): Promise<number>;
}

/** The timeline's own event names: an agent reports its own kinds of event, never one of these. */
const RESERVED_EVENT =
  /^(oz_|run_|environment_|debug_|worker_|vm_|shared_session|agent_started$|agent_progress$|followup_received$|artifact_refused$)/;

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** Messages between the runs of a tree, and the cursor over their timeline events (orchestration). */
export class MessagesService {
  constructor(private readonly options: MessagesServiceOptions) {}

  private actor(credential: Credential) {
    return actorOf(credential, this.options.placesOf);
  }

  /** A run sends as itself; a member as any run it sees. Every recipient is in the sender's tree. */
  async send(credential: Credential, body: SendMessageBody): Promise<{ message_ids: string[] }> {
    const actor = await this.actor(credential);
    if (actor.kind === 'run' && body.sender_run_id !== actor.run.id)
      throw invalidRequest('sender_run_id must be the run whose task token sends the message');
    const [sender] = await reachable(actor, [body.sender_run_id], this.options.placesOf);
    // Recipients are looked up as the sender's run would: a member cannot bridge two trees either.
    const recipients = await reachable({ kind: 'run', run: sender! }, body.to, this.options.placesOf);
    const messages = recipients.map((recipient) => ({
      message_id: randomUUID(),
      team_uid: sender!.teamUid,
      root_run_id: sender!.rootRunId,
      sender_run_id: sender!.id,
      recipient_run_id: recipient.id,
      subject: body.subject,
      body: body.body,
    }));
    await store.insertMessages(this.options.db, messages);
    return { message_ids: messages.map((message) => message.message_id) };
  }

  async inbox(
    credential: Credential,
    runId: string,
    query: { unread?: boolean; since?: string; limit: number },
  ): Promise<MessageHeader[]> {
    const actor = await this.actor(credential);
    await reachable(actor, [runId], this.options.placesOf);
    const rows = await store.inbox(this.options.db, runId, { ...query, unread: query.unread ?? false });
    return rows.map((row) => ({
      message_id: row.message_id,
      sender_run_id: row.sender_run_id,
      subject: row.subject,
      sent_at: iso(row.sent_at)!,
      delivered_at: iso(row.delivered_at),
      read_at: iso(row.read_at),
    }));
  }

  /** The whole message; marks it read (and delivered). */
  async read(credential: Credential, messageId: string): Promise<FullMessage> {
    const row = await this.mark(credential, messageId, 'read');
    return {
      message_id: row.message_id,
      sender_run_id: row.sender_run_id,
      subject: row.subject,
      body: row.body,
      sent_at: iso(row.sent_at)!,
      delivered_at: iso(row.delivered_at),
      read_at: iso(row.read_at),
    };
  }

  async delivered(credential: Credential, messageId: string): Promise<void> {
    await this.mark(credential, messageId, 'delivered');
  }

  private async mark(credential: Credential, messageId: string, mark: 'delivered' | 'read') {
    const actor = await this.actor(credential);
    const found = await store.findMessage(this.options.db, messageId);
    const recipient = found && (await this.options.placesOf([found.recipient_run_id])).get(found.recipient_run_id);
    if (!found || !reaches(actor, recipient)) throw notFound(`message ${messageId} not found`);
    return store.markMessage(this.options.db, messageId, mark);
  }

  async events(credential: Credential, runIds: string[], since: number, limit: number) {
    const actor = await this.actor(credential);
    const ids = [...new Set(runIds)];
    if (ids.length === 0) throw invalidRequest('run_ids must name at least one run');
    if (ids.length > 20) throw invalidRequest('run_ids names at most 20 runs');
    await reachable(actor, ids, this.options.placesOf);
    return this.options.eventsSince(ids, since, limit);
  }

  /** A run reports events about itself; a member about any run it sees. */
  async report(credential: Credential, runId: string, body: ReportEventBody): Promise<{ sequence: number }> {
    const actor = await this.actor(credential);
    if (actor.kind === 'run' && runId !== actor.run.id) throw notFound(`run ${runId} not found`);
    const [run] = await reachable(actor, [runId], this.options.placesOf);
    if (RESERVED_EVENT.test(body.event_type))
      throw invalidRequest(
        `event_type ${body.event_type} is one of the timeline's own; name the agent's event otherwise`,
      );
    const executionId = body.execution_id === undefined ? run!.executionId : Number(body.execution_id);
    if (executionId < 1 || executionId > run!.executionId)
      throw invalidRequest(`run ${runId} has no execution ${body.execution_id}`);
    const sequence = await this.options.reportEvent({
      runId,
      executionId,
      eventType: body.event_type,
      refId: body.ref_id ?? null,
    });
    return { sequence };
  }
}
