import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { notFound, operationNotSupported } from '../platform/http/errors.js';
import type { UrlSigner } from '../platform/signed-urls.js';
import { type Conversation, normalizeConversation } from './conversation.js';
import type { HarnessEvent } from './harness-protocol.js';
import { type Visibility, visible } from './visibility.js';

/** How long a transcript link works. */
export const TRANSCRIPT_LINK_SECONDS = 10 * 60;

export interface RunOutputsOptions {
  db: Kysely<DB>;
  signer: UrlSigner;
  /** The transcript format of a harness: `events` (normalizable) or `text`. */
  harnessFormat(name: string): 'events' | 'text';
  /** How to read a harness's output lines as protocol events (a CLI harness translates its own stream format). */
  eventReader(name: string | null): (line: string) => HarnessEvent[];
}

/** What runs produced: the normalized conversation and the raw transcript (as signed download links). */
export class RunOutputs {
  constructor(private readonly options: RunOutputsOptions) {}

  private get db() {
    return this.options.db;
  }

  /** Runs of a conversation the caller can see, oldest first. */
  private async conversationRuns(who: Visibility, conversationId: string) {
    return this.db
      .selectFrom('runs')
      .select(['id', 'harness'])
      .where((eb) => visible(eb, who))
      .where('conversation_id', '=', conversationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  private async transcriptOf(runIds: string[], streams: Array<'input' | 'output'>) {
    if (runIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('run_transcript')
      .select(['run_id', 'execution_id', 'stream', 'line', 'at', 'seq'])
      .where('run_id', 'in', runIds)
      .where('stream', 'in', streams)
      .orderBy('seq')
      .execute();
    // Runs in conversation order, each run's lines in the order they were written.
    const order = new Map(runIds.map((id, index) => [id, index]));
    return rows.sort((a, b) => order.get(a.run_id)! - order.get(b.run_id)! || Number(a.seq) - Number(b.seq));
  }

  private assertNormalizable(runs: Array<{ harness: string | null }>): void {
    const text = runs.find((run) => run.harness !== null && this.options.harnessFormat(run.harness) === 'text');
    if (text) {
      throw operationNotSupported(
        `the harness ${text.harness} writes plain text, which has no normalized conversation; download the transcript instead`,
      );
    }
  }

  private async normalized(who: Visibility, conversationId: string, onlyRun?: string): Promise<Conversation | null> {
    const runs = (await this.conversationRuns(who, conversationId)).filter(
      (run) => onlyRun === undefined || run.id === onlyRun,
    );
    if (runs.length === 0) return null;
    this.assertNormalizable(runs);
    const entries = await this.transcriptOf(
      runs.map((run) => run.id),
      ['input', 'output'],
    );
    const readers = new Map(runs.map((run) => [run.id, this.options.eventReader(run.harness)]));
    return entries.length === 0
      ? null
      : normalizeConversation(conversationId, entries, (entry) => readers.get(entry.run_id)!(entry.line));
  }

  /**
   * The run's own part of its conversation (a share link's view): none of the other runs that continued the same
   * conversation, and not its ID, which would name them.
   */
  async runOwnConversation(who: Visibility, runId: string): Promise<Omit<Conversation, 'conversation_id'>> {
    const { conversation_id: _omitted, ...steps } = await this.conversationOfRun(who, runId, true);
    return steps;
  }

  async runConversation(who: Visibility, runId: string): Promise<Conversation> {
    return this.conversationOfRun(who, runId, false);
  }

  /** The conversation the run is part of; `ownPart`: only the run's own steps. */
  private async conversationOfRun(who: Visibility, runId: string, ownPart: boolean): Promise<Conversation> {
    const run = await this.db
      .selectFrom('runs')
      .select(['conversation_id'])
      .where((eb) => visible(eb, who))
      .where('id', '=', runId)
      .executeTakeFirst();
    if (!run) throw notFound(`run ${runId} not found`);
    const conversation = run.conversation_id
      ? await this.normalized(who, run.conversation_id, ownPart ? runId : undefined)
      : null;
    if (!conversation) throw notFound(`run ${runId} has no conversation yet`);
    return conversation;
  }

  async conversation(who: Visibility, conversationId: string): Promise<Conversation> {
    const conversation = await this.normalized(who, conversationId);
    if (!conversation) throw notFound(`conversation ${conversationId} not found`);
    return conversation;
  }

  /** A time-limited link to the run's raw transcript; 404 when the harness has written nothing yet. */
  async runTranscriptLink(who: Visibility, runId: string): Promise<string> {
    const run = await this.db
      .selectFrom('runs')
      .select('id')
      .where((eb) => visible(eb, who))
      .where('id', '=', runId)
      .executeTakeFirst();
    if (!run) throw notFound(`run ${runId} not found`);
    if (!(await this.hasOutput([runId]))) throw notFound(`run ${runId} has no transcript yet`);
    return this.options.signer.sign(
      `/api/v1/downloads/runs/${encodeURIComponent(runId)}/transcript`,
      TRANSCRIPT_LINK_SECONDS,
    ).url;
  }

  async conversationTranscriptLink(who: Visibility, conversationId: string): Promise<string> {
    const runs = await this.conversationRuns(who, conversationId);
    if (runs.length === 0 || !(await this.hasOutput(runs.map((run) => run.id))))
      throw notFound(`conversation ${conversationId} not found`);
    // The link names the runs the caller could see when it was made, so it grants exactly that.
    const ids = runs.map((run) => run.id).join(',');
    return this.options.signer.sign(`/api/v1/downloads/conversations/transcript`, TRANSCRIPT_LINK_SECONDS, {
      runs: ids,
    }).url;
  }

  private async hasOutput(runIds: string[]): Promise<boolean> {
    const row = await this.db
      .selectFrom('run_transcript')
      .select('run_id')
      .where('run_id', 'in', runIds)
      .where('stream', '=', 'output')
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The raw harness output of runs, one line each, for a verified download link. */
  async rawTranscript(runIds: string[]): Promise<string> {
    const rows = await this.transcriptOf(runIds, ['output']);
    return rows.map((row) => `${row.line}\n`).join('');
  }
}
