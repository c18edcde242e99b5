import { Batcher } from '../../platform/db/batcher.js';
import type { RunLifecycle } from './run-lifecycle.js';
import type { CapacityLimits, NewAttachment, NewRun } from './types.js';

/**
 * Inserts the runs of API creates. Creates that arrive together are written in one transaction (one commit and
 * one WAL flush for all of them, as the webhook ingress does with deliveries); each caller still gets its answer
 * only after that commit. Alone, a create is written at once.
 */
export class RunInserts {
  private readonly batches: Batcher<NewRun, boolean>;

  constructor(
    private readonly lifecycle: RunLifecycle,
    private readonly limits: CapacityLimits,
    /** Called once a batch of new runs is committed, to wake the engines. */
    private readonly onQueued: () => void,
  ) {
    this.batches = new Batcher({ maxBatch: 200, maxInFlight: 2, write: (runs) => this.write(runs) });
  }

  /** Inserts the run and tells whether the executing runs are at the limits (it waits in QUEUED then). */
  async insert(run: NewRun, attachments: NewAttachment[]): Promise<{ atCapacity: boolean }> {
    if (attachments.length > 0) {
      // Rare and large: written on their own with their files.
      const result = await this.lifecycle.insertWithFiles(run, attachments, this.limits);
      this.onQueued();
      return result;
    }
    return { atCapacity: await this.batches.submit(run) };
  }

  /** One statement per team in the batch (capacity is per team), all in one transaction. */
  private async write(runs: NewRun[]): Promise<boolean[]> {
    const teams = new Map<string, NewRun[]>();
    for (const run of runs) {
      const own = teams.get(run.team_uid);
      if (own) own.push(run);
      else teams.set(run.team_uid, [run]);
    }
    const atCapacity = new Map<string, boolean>();
    const writeAll = async (lifecycle: RunLifecycle) => {
      for (const [team, own] of teams) atCapacity.set(team, (await lifecycle.insert(own, this.limits)).atCapacity);
    };
    if (teams.size === 1) await writeAll(this.lifecycle);
    else await this.lifecycle.inTransaction(writeAll);
    this.lifecycle.countCreated(runs);
    this.onQueued();
    return runs.map((run) => atCapacity.get(run.team_uid)!);
  }
}
