import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { notFound } from '../platform/http/errors.js';
import type { UrlSigner } from '../platform/signed-urls.js';
import { isTerminal } from './lifecycle/states.js';
import { TRANSCRIPT_LINK_SECONDS } from './output.js';
import { type Visibility, visible } from './visibility.js';

/**
 * What a run's next execution picks up from the one before (GET /agent/runs/{id}/handoff/attachments): the files
 * the run was created with, and the session file a third-party CLI harness (Claude Code, Codex, Gemini CLI) left
 * at the end of the latest ended execution, which the next execution puts back so the CLI resumes. Each comes
 * with a signed link of the same lifetime as a transcript link.
 */

export interface HandoffAttachment {
  attachment_id: string;
  download_url: string;
  filename: string;
  mime_type?: string;
}

/**
 * The session line's shape is the CLI harnesses' (execution/harnesses/cli/session.ts writes it into the transcript);
 * only the fields read here matter: the file's name in the harness's HOME and its gzipped content.
 */
const SESSION_PREFIX = '{"type":"hangar_cli_session"';
interface SessionLine {
  harness: string;
  file: string;
  content: string;
}

/** Run attachments are `input-<position>`; a CLI session `session-<execution>`: stable across calls and replicas. */
const INPUT = /^input-(\d{1,4})$/;
const SESSION = /^session-(\d{1,9})$/;

export class RunHandoff {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly signer: UrlSigner,
  ) {}

  async list(who: Visibility, runId: string): Promise<{ attachments: HandoffAttachment[] }> {
    const run = await this.findRun(who, runId);
    const inputs = await this.db
      .selectFrom('run_attachments')
      .select(['position', 'file_name', 'mime_type'])
      .where('run_id', '=', run.id)
      .orderBy('position')
      .execute();
    const attachments = inputs.map((input) =>
      this.item(run.id, `input-${input.position}`, input.file_name, input.mime_type),
    );
    const ended = latestEndedExecution(run);
    const session = ended === undefined ? undefined : await this.sessionOf(run.id, ended);
    if (session)
      attachments.push(this.item(run.id, `session-${ended}`, path.posix.basename(session.file), SESSION_MIME));
    return { attachments };
  }

  /** The file behind a signed link (the link names the run and the attachment, so it grants exactly that one). */
  async download(runId: string, attachmentId: string): Promise<{ filename: string; mimeType: string; data: Buffer }> {
    const input = INPUT.exec(attachmentId);
    if (input) {
      const row = await this.db
        .selectFrom('run_attachments')
        .select(['file_name', 'mime_type', 'data'])
        .where('run_id', '=', runId)
        .where('position', '=', Number(input[1]))
        .executeTakeFirst();
      if (row) return { filename: row.file_name, mimeType: row.mime_type, data: row.data };
    }
    const session = SESSION.exec(attachmentId);
    if (session) {
      const line = await this.sessionOf(runId, Number(session[1]));
      if (line)
        return {
          filename: path.posix.basename(line.file),
          mimeType: SESSION_MIME,
          data: gunzipSync(Buffer.from(line.content, 'base64')),
        };
    }
    throw notFound(`attachment ${attachmentId} not found`);
  }

  private async findRun(who: Visibility, runId: string) {
    const run = await this.db
      .selectFrom('runs')
      .select(['id', 'state', 'execution_id'])
      .where((eb) => visible(eb, who))
      .where('id', '=', runId)
      .executeTakeFirst();
    if (!run) throw notFound(`run ${runId} not found`);
    return run;
  }

  /** The session the CLI of `execution` kept, when it kept one (the last one it wrote counts). */
  private async sessionOf(runId: string, execution: number): Promise<SessionLine | undefined> {
    const row = await this.db
      .selectFrom('run_transcript')
      .select('line')
      .where('run_id', '=', runId)
      .where('execution_id', '=', execution)
      .where('stream', '=', 'output')
      .where('line', 'like', `${SESSION_PREFIX}%`)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    try {
      const parsed = JSON.parse(row.line) as Partial<SessionLine>;
      if (typeof parsed.file !== 'string' || typeof parsed.content !== 'string') return undefined;
      return { harness: String(parsed.harness), file: parsed.file, content: parsed.content };
    } catch {
      return undefined;
    }
  }

  private item(runId: string, attachmentId: string, filename: string, mimeType: string): HandoffAttachment {
    const link = this.signer.sign(handoffDownloadPath(runId, attachmentId), TRANSCRIPT_LINK_SECONDS);
    return { attachment_id: attachmentId, download_url: link.url, filename, mime_type: mimeType };
  }
}

/** CLI sessions are JSON Lines files. */
const SESSION_MIME = 'application/x-ndjson';

/**
 * The execution that ended last: the current one once the run has ended, else the one before (a queued or running
 * run's execution_id is already the next execution's: a follow-up on an ended run counts it up as it queues it).
 */
function latestEndedExecution(run: { state: string; execution_id: number }): number | undefined {
  const ended = isTerminal(run.state) ? run.execution_id : run.execution_id - 1;
  return ended >= 1 ? ended : undefined;
}

export function handoffDownloadPath(runId: string, attachmentId: string): string {
  return `/api/v1/downloads/runs/${encodeURIComponent(runId)}/handoff/${encodeURIComponent(attachmentId)}`;
}
