import type { Logger } from 'pino';
import type { ArtifactResponse, ReportArtifactBody, RunExecution, UploadArtifactQuery } from '../artifacts/index.js';
import type { ArtifactSink } from '../execution/index.js';
import { problemOf } from '../platform/http/api-fetch.js';
import { relayedProblem } from '../platform/http/errors.js';

export interface ArtifactRetry {
  /**
   * How long an artifact the server answers 503 for is tried again, in milliseconds: the worker's other reports are
   * held by the replica for twice the run lease (docs/lifecycle.md), and an artifact is given the same time.
   */
  forMs: number;
  log?: Pick<Logger, 'warn'>;
}

/** When Retry-After says nothing usable; the server's own 503s say 2 s. */
const DEFAULT_RETRY_AFTER_MS = 2000;

/** Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110), else DEFAULT_RETRY_AFTER_MS. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  const value = header?.trim() ?? '';
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date starts with the day's name ("Tue, 01 Dec 2026 12:00:05 GMT"); Date.parse alone takes "-1" as a year.
  const date = /^[A-Za-z]{3}, /.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? DEFAULT_RETRY_AFTER_MS : Math.max(0, date - now);
}

/**
 * Artifacts through POST /harness-support/report-artifact and upload-artifact, with the task token, as a harness's
 * own calls would. A 503 (the server's database unavailable: it answers so, with Retry-After, instead of writing
 * the artifact) is tried again after Retry-After for `retry.forMs`, as the worker's other reports are held across
 * an outage: the artifact is recorded once the database is back, before the run's end is reported (the execution
 * waits for its artifacts). A 503 means the write did not commit (but for the instant of a commit whose answer was
 * lost), so an artifact is recorded at least once.
 */
export class HarnessSupportArtifacts implements ArtifactSink {
  constructor(
    private readonly apiUrl: string,
    private readonly token: (runId: string) => string,
    private readonly retry: ArtifactRetry,
  ) {}

  report(run: RunExecution, body: ReportArtifactBody): Promise<ArtifactResponse> {
    return this.post(run, '/harness-support/report-artifact', JSON.stringify(body), 'application/json');
  }

  upload(
    run: RunExecution,
    query: UploadArtifactQuery,
    bytes: Buffer,
    mediaType: string | undefined,
  ): Promise<ArtifactResponse> {
    const search = new URLSearchParams(
      Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    return this.post(run, `/harness-support/upload-artifact?${search}`, bytes, mediaType ?? 'application/octet-stream');
  }

  private async post(
    run: RunExecution,
    path: string,
    body: string | Buffer,
    contentType: string,
  ): Promise<ArtifactResponse> {
    let deadline: number | undefined;
    for (;;) {
      const response = await fetch(`${this.apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token(run.runId)}`, 'content-type': contentType },
        body,
      });
      if (response.ok) return (await response.json()) as ArtifactResponse;
      if (response.status === 503) {
        deadline ??= Date.now() + this.retry.forMs;
        const wait = retryAfterMs(response.headers.get('retry-after'));
        if (Date.now() + wait <= deadline) {
          await response.body?.cancel();
          this.retry.log?.warn(
            { runId: run.runId, retryInMs: wait },
            'the server could not record an artifact (HTTP 503): retrying the artifact',
          );
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
      }
      const refusal = await problemOf(response);
      // A refusal (4xx) is the artifact's problem and goes on the timeline; anything else is the server's.
      if (refusal.status < 500)
        throw relayedProblem(refusal.status, refusal.problem.error_code, refusal.problem.detail ?? refusal.message);
      throw new Error(`the server failed to record the artifact (HTTP ${response.status})`);
    }
  }
}
