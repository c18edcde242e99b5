import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { type Visibility, visible } from './visibility.js';

export interface EnvironmentActivity {
  lastCreated: Date;
  lastStarted: Date | null;
}

/**
 * When the runs a caller can see last used an environment or a skill. The environments and skill listings show
 * it; the runs table stays this slice's own.
 */
export class RunActivity {
  constructor(private readonly db: Kysely<DB>) {}

  async byEnvironment(who: Visibility, environmentUids: string[]): Promise<Map<string, EnvironmentActivity>> {
    if (environmentUids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('runs')
      .select((eb) => [
        'runs.environment_id',
        eb.fn.max('runs.created_at').as('last_created'),
        eb.fn.max('runs.started_at').as('last_started'),
      ])
      .where((eb) => visible(eb, who))
      .where('runs.environment_id', 'in', environmentUids)
      .groupBy('runs.environment_id')
      .execute();
    return new Map(
      rows.map((row) => [
        row.environment_id!,
        { lastCreated: new Date(row.last_created), lastStarted: row.last_started && new Date(row.last_started) },
      ]),
    );
  }

  /** Latest creation time of a run per skill spec, for the specs given. */
  async bySkillSpec(who: Visibility, specs: string[]): Promise<Map<string, Date>> {
    if (specs.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('runs')
      .select((eb) => ['runs.skill_spec', eb.fn.max('runs.created_at').as('last_created')])
      .where((eb) => visible(eb, who))
      .where('runs.skill_spec', 'in', specs)
      .groupBy('runs.skill_spec')
      .execute();
    return new Map(rows.map((row) => [row.skill_spec!, new Date(row.last_created)]));
  }
}
