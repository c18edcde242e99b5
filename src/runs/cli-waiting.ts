// What `hangar run --follow` and `hangar runs events` say while a run waits (issue 48): the reason was printed
// once, then nothing moved, so a run that nothing can execute looked like a CLI that hung. The wait is shown as
// it lasts: on a terminal a live line with the time waited and the server's reason, elsewhere (logs, CI) a line
// now and then, each repeating the reason, which names what to set.
import { duration } from '../platform/cli/format.js';
import { type ClientOptions, callApi } from '../platform/http/client.js';
import type { RunItem } from './schemas.js';

/** When a line is written again off a terminal: after 5, 15 and 30 s, then every minute. */
const REPORTS_S = [5, 15, 30, 60];
const REPORT_EVERY_S = 60;
/** A terminal's live line is redrawn each second, and the reason asked again every few seconds. */
const REDRAW_MS = 1000;
const RECHECK_EVERY = 5;

/** Words for a duration in seconds (e.g. `--timeout 90s`); the forms `--timeout` takes: 45, 45s, 10m, 2h. */
export function parseTimeout(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h)?$/.exec(value.trim());
  if (!match || Number(match[1]) <= 0)
    throw new Error(`--timeout takes a duration such as 45s, 10m or 2h (seconds without a unit); got "${value}"`);
  return Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] ?? 's']!;
}

export class WaitNotice {
  private timer: NodeJS.Timeout | undefined;
  private live = false;
  private ticks = 0;
  private report = 0;
  private readonly started = Date.now();
  private readonly tty: boolean;

  constructor(
    private readonly client: ClientOptions,
    private readonly runId: string,
    private reason: string | undefined,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {
    this.tty = out.isTTY === true;
  }

  /** Starts showing the wait, when the run waits (it has a queue_reason). */
  start(): void {
    if (!this.reason) return;
    if (this.tty) {
      this.draw();
      this.timer = setInterval(() => void this.tick(), REDRAW_MS);
      this.timer.unref();
    } else this.scheduleReport();
  }

  /** Before one of the run's own lines: the live line makes way (it is drawn again on the next tick). */
  clear(): void {
    if (!this.live) return;
    this.out.write('\r\x1b[K');
    this.live = false;
  }

  /** The run was picked up, or the follow ends. */
  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.reason = undefined;
    this.clear();
  }

  private waited(): string {
    return duration((Date.now() - this.started) / 1000);
  }

  private draw(): void {
    if (!this.reason) return;
    this.out.write(`\r\x1b[Kwaiting ${this.waited()}: ${this.reason}`);
    this.live = true;
  }

  private async tick(): Promise<void> {
    this.ticks += 1;
    if (this.ticks % RECHECK_EVERY === 0) await this.recheck();
    if (this.timer) this.draw();
  }

  private scheduleReport(): void {
    const at =
      REPORTS_S[this.report] ?? (REPORTS_S.at(-1) ?? 0) + (this.report - REPORTS_S.length + 1) * REPORT_EVERY_S;
    this.report += 1;
    const due = this.started + at * 1000 - Date.now();
    this.timer = setTimeout(async () => {
      await this.recheck();
      if (!this.reason || !this.timer) return;
      this.out.write(`still waiting after ${this.waited()}: ${this.reason}\n`);
      this.scheduleReport();
    }, due);
    this.timer.unref();
  }

  /** Asks the run again: its reason may have changed, or it no longer waits. A failed look keeps the last one. */
  private async recheck(): Promise<void> {
    try {
      const run = await callApi<Pick<RunItem, 'queue_reason'>>(
        this.client,
        'GET',
        `/agent/runs/${encodeURIComponent(this.runId)}`,
      );
      if (!this.timer) return;
      if (run.queue_reason) this.reason = run.queue_reason.message;
      else this.stop();
    } catch {
      // The follow itself reports a server that is gone.
    }
  }
}
