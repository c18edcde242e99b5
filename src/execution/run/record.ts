import type { FastifyBaseLogger } from 'fastify';
import type { ClaimedRun, Outcome, RunState, TimelineEvent, TranscriptRow, Transition } from '../../runs/index.js';
import type { RunLedger } from './ledger.js';

/**
 * What one execution writes through its ledger: timeline events (some ride with its next write rather than costing
 * a statement of their own), its moves, its end and the end's log line.
 */
export class RunRecord {
  private unwritten: TimelineEvent[] = [];
  /** When this execution was claimed: a run end's log line gives its duration. */
  private readonly startedAt = Date.now();
  /** When this execution began (its claim), for the setup time. */
  readonly began = performance.now();

  constructor(
    private readonly ledger: RunLedger,
    private readonly run: ClaimedRun,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** An event written with the execution's next write. */
  later(event: TimelineEvent): void {
    this.unwritten.push(event);
  }

  /** `events` after those waiting for the next write, which are then written. */
  withUnwritten(events: TimelineEvent[]): TimelineEvent[] {
    const all = [...this.unwritten, ...events];
    this.unwritten = [];
    return all;
  }

  event(type: string, payload?: Record<string, unknown>): Promise<void> {
    return this.ledger.events(this.run.id, this.run.execution_id, this.withUnwritten([{ type, payload }]));
  }

  /** Moves the run on if it is still this execution's; false when it was cancelled or taken back meanwhile. */
  transition(from: RunState, to: RunState, events: TimelineEvent[], extra: Partial<Transition> = {}) {
    return this.ledger.transition({
      runId: this.run.id,
      executionId: this.run.execution_id,
      from,
      to,
      events: this.withUnwritten(events),
      ...extra,
    });
  }

  async finish(outcome: Outcome, before: TimelineEvent[], transcript: TranscriptRow[]) {
    const result = await this.ledger.finish({
      runId: this.run.id,
      executionId: this.run.execution_id,
      outcome,
      before,
      transcript,
    });
    if (result === 'ended') this.logEnd(outcome.state, outcome.statusMessage?.error_code);
    return result;
  }

  /** One line per run end at info (issue 26): operators see failed runs in the server log, not only in the API. */
  logEnd(state: RunState, errorCode: unknown): void {
    const durationMs = Date.now() - this.startedAt;
    this.log.info(
      {
        runId: this.run.id,
        state,
        ...(typeof errorCode === 'string' ? { error_code: errorCode } : {}),
        duration_ms: durationMs,
      },
      `run ${this.run.id} ended ${state}${typeof errorCode === 'string' ? ` (${errorCode})` : ''} after ${(durationMs / 1000).toFixed(1)} s`,
    );
  }
}
