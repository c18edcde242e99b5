import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { conflict, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { rfc3339 } from '../platform/time.js';
import type { AgentDirectory } from '../runs/index.js';
import { automationCronHistory, cronProblem, syncAutomationSchedules } from '../schedules/index.js';
import { deliveryQueue, type FactoryDirectory, type WebhooksService } from '../webhooks/index.js';
import { evaluatePayloadFilter, payloadFilterProblem } from './filter.js';
import {
  type AutomationFiring,
  type AutomationItem,
  type CreateAutomationBody,
  FIRINGS_SHOWN,
  type TestFilterBody,
  type TestFilterResult,
  type Trigger,
  type UpdateAutomationBody,
  type WebhookFilter,
} from './schemas.js';
import * as store from './store.js';

export interface AutomationsServiceOptions {
  db: Kysely<DB>;
  factories: FactoryDirectory;
  webhooks: WebhooksService;
  agents: AgentDirectory;
  now?: () => Date;
  /** Wakes this process's scheduler when cron triggers changed. */
  onSchedulesChanged?: () => void;
}

/** The first trigger that matches a delivery to `webhookUid` with `payload`, with what each check found. */
export function checkTriggers(triggers: Trigger[], webhookUid: string, payload: unknown): TestFilterResult {
  const webhookTriggers = triggers.filter((trigger) => trigger.provider === 'webhook');
  const selecting = webhookTriggers.filter((trigger) => trigger.filter.webhook_ids.includes(webhookUid));
  if (selecting.length === 0) {
    return {
      would_trigger: false,
      webhook_check: { passed: false, detail: `no webhook trigger selects webhook ${webhookUid}` },
      payload_check: { passed: false, detail: 'not evaluated: the webhook check failed' },
    };
  }
  let first: TestFilterResult | undefined;
  for (const trigger of selecting) {
    const verdict =
      trigger.filter.payload === undefined
        ? { matched: true, reason: 'no payload filter: every delivery matches' }
        : evaluatePayloadFilter(trigger.filter.payload, payload);
    const result = {
      would_trigger: verdict.matched,
      webhook_check: { passed: true, detail: `the trigger selects webhook ${webhookUid}` },
      payload_check: { passed: verdict.matched, detail: verdict.reason },
    };
    if (verdict.matched) return result;
    first ??= result;
  }
  return first!;
}

/** An automation's name is unique in its factory: a create or rename onto a taken name fails on this constraint. */
const NAME_CONSTRAINT = 'automations_factory_uid_name_key';

/** Automations: a prompt and run overrides, started by webhook deliveries that pass a filter, or on cron. */
export class AutomationsService {
  private readonly now: () => Date;

  constructor(private readonly options: AutomationsServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  private get db() {
    return this.options.db;
  }

  /** Checks triggers and references before anything is saved; messages name the offending trigger. */
  async check(caller: Caller, values: store.AutomationValues): Promise<void> {
    if (values.name.trim() === '') throw invalidRequest('name must not be blank');
    if (values.prompt.trim() === '') throw invalidRequest('prompt must not be blank');
    for (const [index, trigger] of values.triggers.entries()) {
      if (trigger.provider === 'schedule') {
        const problem = cronProblem(trigger.schedule.cron);
        if (problem) throw invalidRequest(`triggers[${index}].schedule.cron: ${problem}`);
        continue;
      }
      const payload = trigger.filter?.payload;
      if (payload !== undefined) {
        const problem = payloadFilterProblem(payload);
        if (problem) throw invalidRequest(`triggers[${index}].filter: ${problem}`);
      }
    }
    const selected = store.selectedWebhooks(values.triggers);
    const known = await deliveryQueue.webhooksByUid(this.db, caller.teamUid, selected);
    const unknown = selected.filter((uid) => !known.has(uid));
    if (unknown.length > 0)
      throw invalidRequest(
        `webhook_ids name no webhook of this team: ${unknown.join(', ')} (use webhook UIDs, not names)`,
      );
    if (
      values.agent_uid !== null &&
      !(await this.options.agents.findForRun(this.db, caller.teamUid, values.agent_uid))
    ) {
      throw notAuthorized(`agent identity ${values.agent_uid} does not exist in this team`);
    }
  }

  private async render(teamUid: string, rows: store.AutomationRow[]): Promise<AutomationItem[]> {
    const webhooks = await deliveryQueue.webhooksByUid(this.db, teamUid, [
      ...new Set(rows.flatMap((row) => row.webhook_uids)),
    ]);
    const crons = await automationCronHistory(
      this.db,
      rows.filter((row) => row.triggers.some((trigger) => trigger.provider === 'schedule')).map((row) => row.id),
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      factory_uid: row.factory_uid,
      prompt: row.prompt,
      enabled: row.enabled,
      agent_uid: row.agent_uid,
      agent_config: row.agent_config,
      triggers: row.triggers,
      webhooks: row.webhook_uids.map((uid) => {
        const webhook = webhooks.get(uid);
        return {
          uid,
          name: webhook?.name ?? null,
          state: webhook ? (webhook.enabled ? 'enabled' : 'disabled') : 'deleted',
        } as const;
      }),
      schedule: crons.get(row.id) ?? null,
      created_at: rfc3339(row.created_at),
      updated_at: rfc3339(row.updated_at),
    }));
  }

  private async load(caller: Caller, id: string): Promise<store.AutomationRow> {
    const row = await store.findAutomation(this.db, caller.teamUid, id);
    if (!row) throw notFound(`automation ${id} not found`);
    return row;
  }

  /** Saves the automation's cron triggers as its schedules, in the same transaction. */
  private syncSchedules(
    db: Kysely<DB>,
    id: string,
    teamUid: string,
    createdBy: string,
    values: store.AutomationValues,
  ) {
    return syncAutomationSchedules(
      db,
      {
        automationId: id,
        teamUid,
        name: values.name,
        prompt: values.prompt,
        enabled: values.enabled,
        agentConfig: values.agent_config,
        agentUid: values.agent_uid,
        createdByUid: createdBy,
        crons: values.triggers.flatMap((trigger) =>
          trigger.provider === 'schedule' ? [trigger.schedule.cron.trim()] : [],
        ),
      },
      this.now(),
    );
  }

  /** The automations of a factory, for a definition's apply (inside its transaction `db`). */
  inFactory(db: Kysely<DB>, teamUid: string, factoryUid: string): Promise<store.AutomationRow[]> {
    return store.listAutomations(db, teamUid, factoryUid);
  }

  /** Creates or changes an automation a definition manages, with its cron schedules, inside the apply's transaction. */
  async saveManaged(
    db: Kysely<DB>,
    caller: Caller,
    factoryUid: string,
    existing: store.AutomationRow | undefined,
    values: store.AutomationValues,
  ): Promise<string> {
    const id = existing?.id ?? randomUUID();
    if (existing) await store.updateAutomation(db, caller.teamUid, id, values, caller.principal.uid);
    else
      await store.insertAutomation(db, {
        ...values,
        id,
        team_uid: caller.teamUid,
        factory_uid: factoryUid,
        created_by_uid: caller.principal.uid,
      });
    await this.syncSchedules(db, id, caller.teamUid, existing?.created_by_uid ?? caller.principal.uid, values);
    return id;
  }

  async deleteManaged(db: Kysely<DB>, teamUid: string, id: string): Promise<void> {
    await store.deleteAutomation(db, teamUid, id);
  }

  async list(caller: Caller, factoryUid?: string): Promise<{ automations: AutomationItem[] }> {
    return {
      automations: await this.render(caller.teamUid, await store.listAutomations(this.db, caller.teamUid, factoryUid)),
    };
  }

  async get(caller: Caller, id: string): Promise<AutomationItem> {
    return (await this.render(caller.teamUid, [await this.load(caller, id)]))[0]!;
  }

  async create(caller: Caller, body: CreateAutomationBody): Promise<AutomationItem> {
    this.options.factories.requireManager(caller);
    const values: store.AutomationValues = {
      name: body.name.trim(),
      prompt: body.prompt,
      enabled: body.enabled ?? true,
      agent_uid: body.agent_uid ?? null,
      agent_config: body.agent_config ?? null,
      triggers: body.triggers,
    };
    await this.check(caller, values);
    const id = randomUUID();
    await this.db.transaction().execute(async (trx) => {
      const factory = await this.options.factories.resolve(trx, caller.teamUid, body.factory_uid);
      await withConflicts(
        store.insertAutomation(trx, {
          ...values,
          id,
          team_uid: caller.teamUid,
          factory_uid: factory.uid,
          created_by_uid: caller.principal.uid,
        }),
        { [NAME_CONSTRAINT]: () => conflict(`factory ${factory.name} already has an automation named ${values.name}`) },
      );
      await this.syncSchedules(trx, id, caller.teamUid, caller.principal.uid, values);
    });
    this.options.onSchedulesChanged?.();
    return this.get(caller, id);
  }

  async update(caller: Caller, id: string, body: UpdateAutomationBody): Promise<AutomationItem> {
    this.options.factories.requireManager(caller);
    const row = await this.load(caller, id);
    const values: store.AutomationValues = {
      name: body.name?.trim() ?? row.name,
      prompt: body.prompt ?? row.prompt,
      enabled: body.enabled ?? row.enabled,
      agent_uid: body.agent_uid === undefined ? row.agent_uid : body.agent_uid,
      agent_config: body.agent_config === undefined ? row.agent_config : body.agent_config,
      triggers: body.triggers ?? row.triggers,
    };
    await this.check(caller, values);
    await this.db.transaction().execute(async (trx) => {
      const updated = await withConflicts(
        store.updateAutomation(trx, caller.teamUid, id, values, caller.principal.uid),
        {
          [NAME_CONSTRAINT]: () => conflict(`this factory already has an automation named ${values.name}`),
        },
      );
      if (!updated) throw notFound(`automation ${id} not found`);
      await this.syncSchedules(trx, id, caller.teamUid, row.created_by_uid, values);
    });
    this.options.onSchedulesChanged?.();
    return this.get(caller, id);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    this.options.factories.requireManager(caller);
    if (!(await store.deleteAutomation(this.db, caller.teamUid, id))) throw notFound(`automation ${id} not found`);
  }

  /** The automation's history: what its webhook and GitHub triggers fired, newest first. */
  async firings(caller: Caller, id: string): Promise<{ firings: AutomationFiring[] }> {
    await this.load(caller, id);
    const rows = await store.firingsOf(this.db, id, FIRINGS_SHOWN);
    const deliveries = await deliveryQueue.deliveriesBySeq(
      this.db,
      rows.flatMap((row) => (row.delivery_seq === null ? [] : [row.delivery_seq])),
    );
    return {
      firings: rows.map((row) => {
        const delivery = row.delivery_seq === null ? undefined : deliveries.get(row.delivery_seq);
        return {
          fired_at: rfc3339(row.fired_at),
          source: row.delivery_seq === null ? 'github' : 'webhook',
          delivery_id: row.github_delivery_id ?? delivery?.delivery_id ?? null,
          webhook_uid: delivery?.webhook_uid ?? null,
          github_event: row.github_event,
          run_id: row.run_id,
          error: row.error,
        };
      }),
    };
  }

  /** Would this filter (or this automation) have started a run for that stored delivery? */
  async testFilter(caller: Caller, body: TestFilterBody): Promise<TestFilterResult> {
    if ((body.filter === undefined) === (body.automation_id === undefined))
      throw invalidRequest('give exactly one of filter and automation_id');
    let triggers: Trigger[];
    if (body.filter !== undefined) {
      const problem = body.filter.payload === undefined ? null : payloadFilterProblem(body.filter.payload);
      if (problem) throw invalidRequest(`filter: ${problem}`);
      triggers = [{ provider: 'webhook', event: 'received', filter: body.filter as WebhookFilter }];
    } else {
      triggers = (await this.load(caller, body.automation_id!)).triggers;
    }
    const delivery = await this.options.webhooks.storedDelivery(caller, body.webhook_uid, body.delivery_id);
    if (delivery.status !== 'Accepted' || delivery.body === null) {
      throw invalidRequest(
        `delivery ${body.delivery_id} was not accepted (${delivery.status}), so its payload was not kept`,
      );
    }
    return checkTriggers(triggers, body.webhook_uid, JSON.parse(delivery.body));
  }
}
