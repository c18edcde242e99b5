import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { budgetExceeded, notFound } from '../platform/http/errors.js';
import { monthStart, teamSpendSince } from '../runs/index.js';
import type { SetBudgetBody, TeamSpend } from './schemas.js';

/**
 * Team monthly budgets: set by instance administrators, checked at every run creation (the API's, schedules' and
 * automations'), shown with the month's spend. The spend is the inference cost of the team's runs created this
 * calendar month (UTC), runs still going included: an execution records its usage on the run as it arrives.
 */
export class BudgetsService {
  constructor(private readonly options: { db: Kysely<DB>; now?: () => Date }) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  async spend(teamUid: string, db: Kysely<DB> = this.options.db): Promise<TeamSpend> {
    const team = await db.selectFrom('teams').select('uid').where('uid', '=', teamUid).executeTakeFirst();
    if (!team) throw notFound(`team ${teamUid} does not exist`);
    const start = monthStart(this.now());
    const [budget, spent] = await Promise.all([
      db.selectFrom('team_budgets').selectAll().where('team_uid', '=', teamUid).executeTakeFirst(),
      teamSpendSince(db, teamUid, start),
    ]);
    const limit = budget ? Number(budget.monthly_budget_usd) : null;
    const warnAt = budget?.warn_at_percent ?? null;
    const status: TeamSpend['status'] =
      limit === null ? 'none' : spent >= limit ? 'exceeded' : spent >= (limit * warnAt!) / 100 ? 'warning' : 'ok';
    return {
      team_uid: teamUid,
      month_start: start.toISOString(),
      month_spend_usd: Math.round(spent * 1e6) / 1e6,
      monthly_budget_usd: limit,
      warn_at_percent: warnAt,
      status,
    };
  }

  async set(teamUid: string, body: SetBudgetBody): Promise<TeamSpend> {
    await this.spend(teamUid); // 404 for a team that does not exist
    const values = {
      monthly_budget_usd: body.monthly_budget_usd,
      warn_at_percent: body.warn_at_percent ?? 80,
      updated_at: new Date(),
    };
    await this.options.db
      .insertInto('team_budgets')
      .values({ team_uid: teamUid, ...values })
      .onConflict((oc) => oc.column('team_uid').doUpdateSet(values))
      .execute();
    return this.spend(teamUid);
  }

  async clear(teamUid: string): Promise<TeamSpend> {
    await this.options.db.deleteFrom('team_budgets').where('team_uid', '=', teamUid).execute();
    return this.spend(teamUid);
  }

  /** Refuses a new run of a team that has spent its monthly budget: 403 budget_exceeded, saying what to do. */
  async checkNewRun(db: Kysely<DB>, teamUid: string): Promise<void> {
    const budget = await db
      .selectFrom('team_budgets')
      .select('monthly_budget_usd')
      .where('team_uid', '=', teamUid)
      .executeTakeFirst();
    if (!budget) return;
    const limit = Number(budget.monthly_budget_usd);
    const spent = await teamSpendSince(db, teamUid, monthStart(this.now()));
    if (spent < limit) return;
    throw budgetExceeded(
      `the team has spent ${spent.toFixed(2)} USD of its monthly budget of ${limit.toFixed(2)} USD; new runs start ` +
        'again next month, or when an instance administrator raises the budget (PUT /admin/teams/{teamUid}/budget)',
    );
  }
}
