// The overview page's figures: the runs slice's aggregates and the automations slice's busiest automations for
// one team and one window. Nothing here reaches another team: every query is bounded by the caller's team.
import type { Kysely } from 'kysely';
import { busiestAutomations } from '../automations/index.js';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { runOverview } from '../runs/index.js';
import type { OverviewQuery, OverviewResponse } from './schemas.js';

const HOUR_MS = 3600_000;
const WINDOW_HOURS = { '24h': 24, '7d': 7 * 24 } as const;
const TOP = 5;

export class OverviewService {
  constructor(private readonly options: { db: Kysely<DB>; now?: () => Date }) {}

  async get(caller: Caller, query: OverviewQuery): Promise<OverviewResponse> {
    const window = query.window ?? '24h';
    const until = this.options.now?.() ?? new Date();
    // Whole hours, the current one last: the first bucket starts on the hour (window - 1) hours back.
    const since = new Date(Math.floor(until.getTime() / HOUR_MS) * HOUR_MS - (WINDOW_HOURS[window] - 1) * HOUR_MS);
    const { db } = this.options;
    const [runs, automations] = await Promise.all([
      runOverview(db, caller.teamUid, { since, until, bucketSeconds: 3600 }),
      busiestAutomations(db, caller.teamUid, since, TOP),
    ]);
    return {
      window,
      since: since.toISOString(),
      until: until.toISOString(),
      bucket_seconds: 3600,
      runs_by_hour: runs.runsByBucket,
      queue: {
        waiting_now: runs.queue.waitingNow,
        queued_now: runs.queue.queuedNow,
        pending_now: runs.queue.pendingNow,
        running_now: runs.queue.runningNow,
        over_time: runs.queue.overTime,
      },
      queue_wait: {
        p50_seconds: runs.timings.queueWait.p50,
        p95_seconds: runs.timings.queueWait.p95,
        runs: runs.timings.queueWait.runs,
      },
      run_time: {
        p50_seconds: runs.timings.runTime.p50,
        p95_seconds: runs.timings.runTime.p95,
        runs: runs.timings.runTime.runs,
      },
      failures: runs.failures.map((failure) => ({ error_code: failure.errorCode, runs: failure.runs })),
      spend_by_day: runs.spendByDay.map((spend) => ({
        day: spend.day,
        model_id: spend.modelId,
        cost_usd: spend.costUsd,
        runs: spend.runs,
      })),
      busiest_schedules: runs.busiestSchedules.map((schedule) => ({
        schedule_id: schedule.scheduleId,
        name: schedule.name,
        runs: schedule.runs,
      })),
      busiest_automations: automations,
    };
  }
}
