import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { rfc3339 } from '../platform/time.js';
import { type AgentDirectory, metadataProblem } from '../runs/index.js';
import { cronProblem, nextTickAfter } from './cron.js';
import type { CreateScheduleBody, ScheduleItem, UpdateScheduleBody } from './schemas.js';
import * as store from './store.js';

export type Clock = () => Date;

export interface SchedulesServiceOptions {
  db: Kysely<DB>;
  agents: AgentDirectory;
  /** Injectable so tests can evaluate cron and history at a chosen time. */
  now?: Clock;
  /** Wakes the scheduler loop in this process when a schedule's next tick may have moved earlier. */
  onChange?: () => void;
  /** The config of an environment as `caller` sees it; undefined when its team cannot reach it. */
  environmentConfig?: (caller: Caller, environmentId: string) => Promise<Record<string, unknown> | undefined>;
}

const iso = (value: Date | string | null) => (value === null ? null : rfc3339(value));

/** A user has a name; a principal without one among the users is an agent identity's (its API key made the change). */
function profile(uid: string, name: string | null, email: string | null): ScheduleItem['created_by'] {
  if (name === null) return { type: 'service_account', uid };
  return { type: 'user', uid, display_name: name, ...(email ? { email } : {}) };
}

export function renderSchedule(row: store.ScheduleRow, environment?: Record<string, unknown>): ScheduleItem {
  return {
    id: row.id,
    name: row.name,
    cron_schedule: row.cron_schedule,
    enabled: row.enabled,
    prompt: row.prompt,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    ...(row.agent_config ? { agent_config: row.agent_config } : {}),
    ...(row.agent_uid ? { agent_uid: row.agent_uid } : {}),
    metadata: row.metadata,
    ...(row.mode ? { mode: row.mode } : {}),
    ...(environment ? { environment } : {}),
    created_by: profile(row.created_by_uid, row.created_by_name, row.created_by_email),
    updated_by: profile(row.updated_by_uid, row.updated_by_name, row.updated_by_email),
    history: { last_ran: iso(row.last_ran_at), next_run: row.enabled ? iso(row.next_run_at) : null },
    last_spawn_error: row.last_spawn_error,
    scope: { type: row.scope_type, uid: row.scope_uid },
  };
}

export class SchedulesService {
  private readonly now: Clock;

  constructor(private readonly options: SchedulesServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  private get db() {
    return this.options.db;
  }

  private who(caller: Caller): store.Visibility {
    return { teamUid: caller.teamUid, principalUid: caller.principal.uid };
  }

  /** Checks what create and update share and computes the next tick. */
  private async values(caller: Caller, body: UpdateScheduleBody): Promise<store.ScheduleValues> {
    const name = body.name.trim();
    if (name === '') throw invalidRequest('name must not be blank');
    if (body.prompt.trim() === '') throw invalidRequest('prompt must not be blank');
    const problem = cronProblem(body.cron_schedule);
    if (problem) throw invalidRequest(problem);
    const metadata = body.metadata ?? {};
    const metadataIssue = metadataProblem(metadata);
    if (metadataIssue) throw invalidRequest(metadataIssue);
    if (
      body.agent_uid !== undefined &&
      !(await this.options.agents.findForRun(this.db, caller.teamUid, body.agent_uid))
    ) {
      throw notAuthorized(`agent identity ${body.agent_uid} does not exist in this team`);
    }
    const cron = body.cron_schedule.trim();
    return {
      name,
      cron_schedule: cron,
      prompt: body.prompt,
      enabled: body.enabled,
      agent_config: body.agent_config ?? null,
      agent_uid: body.agent_uid ?? null,
      metadata,
      mode: body.mode ?? null,
      next_run_at: body.enabled ? nextTickAfter(cron, this.now()) : null,
    };
  }

  private async load(caller: Caller, id: string): Promise<ScheduleItem> {
    const row = await store.findSchedule(this.db, this.who(caller), id);
    if (!row) throw notFound(`schedule ${id} not found`);
    return (await this.render(caller, [row]))[0]!;
  }

  /** The items with their environments resolved, each distinct environment looked up once. */
  private async render(caller: Caller, rows: store.ScheduleRow[]): Promise<ScheduleItem[]> {
    const configs = new Map<string, Record<string, unknown> | undefined>();
    const lookup = this.options.environmentConfig;
    for (const row of rows) {
      const id = row.agent_config?.environment_id;
      if (typeof id === 'string' && lookup && !configs.has(id)) configs.set(id, await lookup(caller, id));
    }
    return rows.map((row) => {
      const id = row.agent_config?.environment_id;
      return renderSchedule(row, typeof id === 'string' ? configs.get(id) : undefined);
    });
  }

  async create(caller: Caller, body: CreateScheduleBody): Promise<ScheduleItem> {
    const values = await this.values(caller, body);
    const id = randomUUID();
    const teamOwned = body.team ?? true;
    await store.insertSchedule(this.db, {
      ...values,
      id,
      team_uid: caller.teamUid,
      scope_type: teamOwned ? 'Team' : 'User',
      scope_uid: teamOwned ? caller.teamUid : caller.principal.uid,
      created_by_uid: caller.principal.uid,
    });
    this.options.onChange?.();
    return this.load(caller, id);
  }

  async list(caller: Caller): Promise<{ schedules: ScheduleItem[] }> {
    return { schedules: await this.render(caller, await store.listSchedules(this.db, this.who(caller))) };
  }

  get(caller: Caller, id: string): Promise<ScheduleItem> {
    return this.load(caller, id);
  }

  async update(caller: Caller, id: string, body: UpdateScheduleBody): Promise<ScheduleItem> {
    if (!(await store.findSchedule(this.db, this.who(caller), id))) throw notFound(`schedule ${id} not found`);
    const values = await this.values(caller, body);
    if (!(await store.updateSchedule(this.db, this.who(caller), id, values, caller.principal.uid)))
      throw notFound(`schedule ${id} not found`);
    this.options.onChange?.();
    return this.load(caller, id);
  }

  async pause(caller: Caller, id: string): Promise<ScheduleItem> {
    if (!(await store.setEnabled(this.db, this.who(caller), id, false, null, caller.principal.uid)))
      throw notFound(`schedule ${id} not found`);
    return this.load(caller, id);
  }

  async resume(caller: Caller, id: string): Promise<ScheduleItem> {
    const row = await store.findSchedule(this.db, this.who(caller), id);
    if (!row) throw notFound(`schedule ${id} not found`);
    // Resuming starts from now: ticks missed while paused are not made up.
    const next = nextTickAfter(row.cron_schedule, this.now());
    await store.setEnabled(this.db, this.who(caller), id, true, next, caller.principal.uid);
    this.options.onChange?.();
    return this.load(caller, id);
  }

  async delete(caller: Caller, id: string): Promise<{ success: true }> {
    if (!(await store.deleteSchedule(this.db, this.who(caller), id))) throw notFound(`schedule ${id} not found`);
    return { success: true };
  }
}

/** What an automation's cron trigger becomes: a schedule the scheduler fires like any other. */
export interface AutomationCron {
  automationId: string;
  teamUid: string;
  name: string;
  prompt: string;
  enabled: boolean;
  agentConfig: Record<string, unknown> | null;
  agentUid: string | null;
  createdByUid: string;
  crons: string[];
}

/**
 * Keeps an automation's schedules in step with its cron triggers, inside the automation's transaction. A cron
 * that stays keeps its schedule, its next tick and its history; new ones start from the next tick after `now`.
 */
export async function syncAutomationSchedules(db: Kysely<DB>, automation: AutomationCron, now: Date): Promise<void> {
  const existing = await store.automationScheduleRows(db, automation.automationId);
  for (const cron of new Set(automation.crons)) {
    const kept = existing.find((row) => row.cron_schedule === cron);
    const stillDue = kept?.enabled && kept.next_run_at !== null ? kept.next_run_at : nextTickAfter(cron, now);
    const values: store.ScheduleValues = {
      name: automation.name,
      cron_schedule: cron,
      prompt: automation.prompt,
      enabled: automation.enabled,
      agent_config: automation.agentConfig,
      agent_uid: automation.agentUid,
      metadata: {},
      mode: null,
      next_run_at: automation.enabled ? stillDue : null,
    };
    if (kept) {
      await store.updateAutomationSchedule(db, kept.id, values);
      existing.splice(existing.indexOf(kept), 1);
    } else {
      await store.insertAutomationSchedule(db, automation.automationId, {
        ...values,
        id: randomUUID(),
        team_uid: automation.teamUid,
        created_by_uid: automation.createdByUid,
      });
    }
  }
  await store.deleteSchedulesById(
    db,
    existing.map((row) => row.id),
  );
}

/** The next and last runs of automations' cron triggers, per automation. */
export async function automationCronHistory(db: Kysely<DB>, automationIds: string[]) {
  const rows = await store.automationSchedules(db, automationIds);
  const history = new Map<
    string,
    { next_run: string | null; last_ran: string | null; last_spawn_error: string | null }
  >();
  for (const row of rows) {
    const previous = history.get(row.automation_id!);
    const next = row.next_run_at ? rfc3339(row.next_run_at) : null;
    const last = row.last_ran_at ? rfc3339(row.last_ran_at) : null;
    history.set(row.automation_id!, {
      next_run: [previous?.next_run ?? null, next].filter((value): value is string => value !== null).sort()[0] ?? null,
      last_ran:
        [previous?.last_ran ?? null, last]
          .filter((value): value is string => value !== null)
          .sort()
          .reverse()[0] ?? null,
      last_spawn_error: previous?.last_spawn_error ?? row.last_spawn_error,
    });
  }
  return history;
}
