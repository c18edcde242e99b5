/**
 * Sends an execution's usage to its ledger as it grows, so the run's spend is known while it runs (a team's
 * monthly budget counts runs in flight). One write at a time: usage arriving during a write waits and only the
 * latest figure goes next, so a chatty harness costs at most one statement in flight per execution. A write that
 * fails is only reported: the end writes the final figure anyway.
 */
export class LiveUsage {
  private latest: Record<string, number> | undefined;
  private writing = false;

  constructor(
    private readonly write: (usage: Record<string, number>) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  report(usage: Record<string, number>): void {
    this.latest = usage;
    if (!this.writing) void this.drain();
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.latest) {
      const usage = this.latest;
      this.latest = undefined;
      await this.write(usage).catch(this.onError);
    }
    this.writing = false;
  }
}
