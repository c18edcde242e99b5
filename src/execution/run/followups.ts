import type { FastifyBaseLogger } from 'fastify';
import type { HarnessSession } from '../harnesses/harness.js';
import type { RunLedger } from './ledger.js';

/**
 * Gives follow-ups that arrive while the agent runs to it, when the harness accepts input. Deliveries run one at a
 * time, and the execution waits for the last before it ends, so a follow-up that cannot be written (the harness
 * just exited) is put back for the next execution instead of being lost.
 */
export class FollowupDelivery {
  private session: HarnessSession | undefined;
  private exited = false;
  private delivery: Promise<void> = Promise.resolve();

  constructor(
    private readonly ledger: RunLedger,
    private readonly runId: string,
    private readonly executionId: number,
    private readonly signal: AbortSignal,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** A harness process exists: once it exits, nothing more is written to it. */
  spawned(session: HarnessSession): void {
    void session.exited.then(() => this.harnessExited());
  }

  /** The harness's start is recorded: follow-ups go to it from now on. */
  attach(session: HarnessSession): void {
    this.session = session;
  }

  harnessExited(): void {
    this.exited = true;
  }

  deliver(): Promise<void> {
    this.delivery = this.delivery
      .then(() => this.deliverNow())
      .catch((error) => this.log.warn({ err: error, runId: this.runId }, 'follow-up delivery failed'));
    return this.delivery;
  }

  /** Resolves once the delivery in progress, if any, has ended. */
  drained(): Promise<void> {
    return this.delivery;
  }

  private async deliverNow(): Promise<void> {
    const session = this.session;
    if (!session?.acceptsInput || this.signal.aborted || this.exited) return;
    const inputs = await this.ledger.takeFollowups(this.runId, this.executionId);
    const unsent = inputs.filter((input) => this.exited || !session.send(input.message));
    if (unsent.length > 0)
      await this.ledger.returnFollowups(
        this.runId,
        this.executionId,
        unsent.map((input) => input.seq),
      );
  }
}
