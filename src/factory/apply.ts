import type { Kysely } from 'kysely';
import type { AutomationsService, AutomationValues } from '../automations/index.js';
import type { DB } from '../database.js';
import type { AgentsService, AgentValues, Caller } from '../identities/index.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { ApiError, conflict, invalidRequest } from '../platform/http/errors.js';
import type { RunnersService } from '../runners/index.js';
import {
  MAX_WEBHOOKS_PER_FACTORY,
  type SecretReader,
  type WebhooksService,
  type WebhookValues,
} from '../webhooks/index.js';
import { reconcileRunners } from './apply-runners.js';
import { change, type DefinitionChange } from './changes.js';
import {
  type AutomationDefinition,
  compareErrors,
  type DefinitionError,
  type FactoryDefinition,
  parseDefinition,
} from './definition.js';
import { requireFactoryManager } from './service.js';
import * as store from './store.js';

export type { DefinitionChange } from './changes.js';

export interface ApplyResult {
  applied: boolean;
  factory: { uid: string | null; name: string };
  changes: DefinitionChange[];
}

export interface FactoryDefinitionsOptions {
  db: Kysely<DB>;
  webhooks: WebhooksService;
  automations: AutomationsService;
  agents: AgentsService;
  runners: RunnersService;
  secrets: SecretReader;
  /** After an apply committed (cron triggers may have changed). */
  onApplied?: () => void;
}

/** Thrown inside a plan's transaction to roll back what it did, carrying what it would have done. */
class PlanOnly extends Error {
  constructor(readonly result: Omit<ApplyResult, 'applied'>) {
    super('plan only');
  }
}

function definitionProblem(errors: DefinitionError[]): ApiError {
  const where = (error: DefinitionError) => `${error.file}${error.line ? `:${error.line}` : ''}`;
  const lines = errors.map((error) => `${where(error)}: ${error.message}`);
  return invalidRequest(
    `the definition has ${errors.length} problem${errors.length === 1 ? '' : 's'}:\n${lines.join('\n')}`,
    { errors },
  );
}

/** The run overrides an automation file gives, as the API's agent_config. */
function overridesConfig(definition: AutomationDefinition): Record<string, unknown> | null {
  const { model_id, harness, environment_id } = definition.overrides;
  const config = {
    ...(model_id ? { model_id } : {}),
    ...(harness ? { harness: { type: harness } } : {}),
    ...(environment_id ? { environment_id } : {}),
  };
  return Object.keys(config).length > 0 ? config : null;
}

/**
 * Definition directories (`hangar factory plan|apply <dir>`): a factory's webhooks, automations, agents, skills
 * and runners as files. An apply reconciles the factory with the files in one transaction, as a whole or not at all;
 * things are matched by name, so UIDs stay stable across applies and a renamed file is a delete plus a create.
 * A plan does the same work and rolls it back.
 */
export class FactoryDefinitions {
  constructor(private readonly options: FactoryDefinitionsOptions) {}

  plan(caller: Caller, files: Record<string, string>): Promise<ApplyResult> {
    return this.run(caller, files, false);
  }

  apply(caller: Caller, files: Record<string, string>): Promise<ApplyResult> {
    return this.run(caller, files, true);
  }

  private async run(caller: Caller, files: Record<string, string>, commit: boolean): Promise<ApplyResult> {
    requireFactoryManager(caller);
    const parsed = parseDefinition(files);
    // Every problem in one answer: what the files say, then what only the database can tell (secrets, UIDs, models,
    // environments) about the files without errors of their own, found by a reconcile that is always rolled back
    // when anything is wrong.
    const errors = [...parsed.errors];
    const definition = parsed.valid;
    if (!definition) throw definitionProblem(errors);
    errors.push(...(await this.checkReferences(caller, definition)));
    try {
      const result = await this.options.db.transaction().execute(async (trx) => {
        const outcome = await this.reconcile(trx, caller, definition);
        errors.push(...outcome.errors);
        if (errors.length > 0) throw definitionProblem(errors.sort(compareErrors));
        if (!commit) throw new PlanOnly(outcome);
        return { factory: outcome.factory, changes: outcome.changes };
      });
      this.options.onApplied?.();
      return { applied: true, ...result };
    } catch (error) {
      if (error instanceof PlanOnly) {
        // What a plan would create does not exist: it has no UID yet.
        const changes = error.result.changes.map((item) => (item.action === 'create' ? { ...item, uid: null } : item));
        const factoryCreated = changes.some((item) => item.kind === 'factory' && item.action === 'create');
        return {
          applied: false,
          factory: { ...error.result.factory, uid: factoryCreated ? null : error.result.factory.uid },
          changes,
        };
      }
      throw error;
    }
  }

  /** What only the database can tell: secrets that exist, webhooks behind UIDs, triggers' and overrides' references. */
  private async checkReferences(caller: Caller, definition: FactoryDefinition): Promise<DefinitionError[]> {
    const errors: DefinitionError[] = [];
    for (const webhook of definition.webhooks) {
      try {
        await this.options.webhooks.checkSecretName(caller.teamUid, webhook.secretName, webhook.authMode);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        errors.push({ file: webhook.file, line: webhook.lines.secretName ?? null, message: error.detail });
      }
    }
    for (const automation of definition.automations) {
      try {
        await this.options.automations.check(caller, this.automationValues(automation, null));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const line =
          automation.lines[Object.keys(automation.lines).find((key) => key.startsWith('triggers')) ?? ''] ?? null;
        errors.push({ file: automation.file, line, message: error.detail });
      }
    }
    return errors;
  }

  private automationValues(definition: AutomationDefinition, agentUid: string | null): AutomationValues {
    return {
      name: definition.name,
      prompt: definition.prompt,
      enabled: definition.enabled,
      agent_uid: agentUid,
      agent_config: overridesConfig(definition),
      triggers: definition.triggers,
    };
  }

  private async reconcile(
    trx: Kysely<DB>,
    caller: Caller,
    definition: FactoryDefinition,
  ): Promise<Omit<ApplyResult, 'applied'> & { errors: DefinitionError[] }> {
    const changes: DefinitionChange[] = [];
    const errors: DefinitionError[] = [];
    let factory = await store.findFactoryByName(trx, caller.teamUid, definition.name);
    if (!factory) {
      // A unique violation aborts this transaction: the 409 leaves it, and the whole apply is rolled back.
      factory = await withConflicts(store.insertFactory(trx, caller.teamUid, definition.name), {
        factories_team_uid_name_key: () =>
          conflict(`factory ${definition.name} is being created by another apply; try again`, { retryable: true }),
      });
      changes.push({ kind: 'factory', name: definition.name, action: 'create', uid: factory.uid });
    } else {
      changes.push(
        change(
          'factory',
          definition.name,
          factory.uid,
          { description: factory.description },
          { description: definition.description },
        ),
      );
    }
    // One apply at a time per factory: the second waits here and then sees the first one's result.
    await store.lockFactory(trx, factory.uid);
    await store.setDescription(trx, factory.uid, definition.description);

    changes.push(...(await this.reconcileSkills(trx, caller, factory, definition)));
    // Before the agents: an agent file's runner is the UID its runner file got.
    const runners = await reconcileRunners(trx, this.options.runners, caller, factory.uid, definition, errors);
    changes.push(...runners.changes);
    const { changes: agentChanges, uids: agentUids } = await this.reconcileAgents(
      trx,
      caller,
      factory,
      definition,
      runners.uids,
      errors,
    );
    changes.push(...agentChanges);
    changes.push(...(await this.reconcileWebhooks(trx, caller, factory.uid, definition, errors)));
    changes.push(...(await this.reconcileAutomations(trx, caller, factory.uid, definition, agentUids, errors)));
    return { factory: { uid: factory.uid, name: factory.name }, changes, errors };
  }

  private async reconcileSkills(
    trx: Kysely<DB>,
    caller: Caller,
    factory: store.FactoryRow,
    definition: FactoryDefinition,
  ): Promise<DefinitionChange[]> {
    const existing = new Map((await store.skillsOfFactory(trx, factory.uid)).map((skill) => [skill.name, skill]));
    const changes: DefinitionChange[] = [];
    for (const skill of definition.skills) {
      const values = { name: skill.name, description: skill.description, prompt: skill.prompt };
      const item = change(
        'skill',
        skill.name,
        `${factory.name}:skills/${skill.name}/SKILL.md`,
        existing.get(skill.name),
        values,
      );
      if (item.action !== 'unchanged') await store.upsertSkill(trx, factory.uid, caller.teamUid, values);
      changes.push(item);
      existing.delete(skill.name);
    }
    for (const name of existing.keys()) {
      await store.deleteSkill(trx, factory.uid, name);
      changes.push({ kind: 'skill', name, action: 'delete', uid: `${factory.name}:skills/${name}/SKILL.md` });
    }
    return changes;
  }

  private async reconcileAgents(
    trx: Kysely<DB>,
    caller: Caller,
    factory: store.FactoryRow,
    definition: FactoryDefinition,
    runnerUids: Map<string, string>,
    errors: DefinitionError[],
  ) {
    const existing = new Map(
      (await this.options.agents.managedBy(trx, caller.teamUid, factory.uid)).map((row) => [row.name, row]),
    );
    const changes: DefinitionChange[] = [];
    const uids = new Map<string, string>();
    for (const agent of definition.agents) {
      // Its runner could not be saved: that runner's problem is reported, and this agent waits for it.
      const runnerUid = agent.runner === null ? undefined : runnerUids.get(agent.runner);
      if (agent.runner !== null && runnerUid === undefined) {
        existing.delete(agent.name);
        continue;
      }
      const values: AgentValues = {
        name: agent.name,
        description: agent.description,
        prompt: agent.prompt || null,
        environment_id: agent.environment,
        base_model: agent.model,
        worker_host: agent.workerHost,
        skills: agent.skills.map((skill) => `${factory.name}:skills/${skill}/SKILL.md`),
        secrets: [],
        mcp_servers: null,
        harness: agent.harness ? { type: agent.harness } : null,
        // The file's runner (one of the factory's own), or none: a runner file removed takes the default with it.
        default_runner_uid: runnerUid ?? null,
      };
      const before = existing.get(agent.name);
      const item = change('agent', agent.name, before?.uid ?? null, before && pick(before, values), values);
      try {
        const uid =
          item.action === 'unchanged'
            ? before!.uid
            : await this.options.agents.saveManaged(trx, caller, factory.uid, before?.uid ?? null, values);
        uids.set(agent.name, uid);
        changes.push({ ...item, uid });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        errors.push({ file: agent.file, line: null, message: error.detail });
      }
      existing.delete(agent.name);
    }
    for (const row of existing.values()) {
      await this.options.agents.deleteManaged(trx, caller.teamUid, row.uid);
      changes.push({ kind: 'agent', name: row.name, action: 'delete', uid: row.uid });
    }
    return { changes, uids };
  }

  private async reconcileWebhooks(
    trx: Kysely<DB>,
    caller: Caller,
    factoryUid: string,
    definition: FactoryDefinition,
    errors: DefinitionError[],
  ): Promise<DefinitionChange[]> {
    const existing = new Map(
      (await this.options.webhooks.inFactory(trx, caller.teamUid, factoryUid)).map((row) => [row.name, row]),
    );
    // parseDefinition reports more webhooks than a factory holds; nothing of them is saved.
    if (definition.webhooks.length > MAX_WEBHOOKS_PER_FACTORY) return [];
    const changes: DefinitionChange[] = [];
    for (const webhook of definition.webhooks) {
      const values: WebhookValues = {
        name: webhook.name,
        auth_mode: webhook.authMode,
        signature_scheme: webhook.signatureScheme,
        secret_name: webhook.secretName,
        delivery_id_header: webhook.deliveryIdHeader,
        enabled: webhook.enabled,
      };
      const before = existing.get(webhook.name);
      const item = change('webhook', webhook.name, before?.uid ?? null, before && pick(before, values), values);
      existing.delete(webhook.name);
      try {
        const uid =
          item.action === 'unchanged'
            ? before!.uid
            : await this.options.webhooks.saveManaged(trx, caller.teamUid, factoryUid, before, values);
        changes.push({ ...item, uid });
      } catch (error) {
        // A conflict (409) may have aborted the transaction: it ends the reconcile as it is.
        if (!(error instanceof ApiError) || error.status >= 500 || error.status === 409) throw error;
        errors.push({ file: webhook.file, line: null, message: error.detail });
      }
    }
    for (const row of existing.values()) {
      await this.options.webhooks.deleteManaged(trx, caller.teamUid, row.uid);
      changes.push({ kind: 'webhook', name: row.name, action: 'delete', uid: row.uid });
    }
    return changes;
  }

  private async reconcileAutomations(
    trx: Kysely<DB>,
    caller: Caller,
    factoryUid: string,
    definition: FactoryDefinition,
    agentUids: Map<string, string>,
    errors: DefinitionError[],
  ): Promise<DefinitionChange[]> {
    const existing = new Map(
      (await this.options.automations.inFactory(trx, caller.teamUid, factoryUid)).map((row) => [row.name, row]),
    );
    const changes: DefinitionChange[] = [];
    for (const automation of definition.automations) {
      const before = existing.get(automation.name);
      existing.delete(automation.name);
      const agentUid = automation.agent === null ? null : agentUids.get(automation.agent);
      // Its agent could not be saved: that agent's problem is reported, and this automation waits for it.
      if (agentUid === undefined) continue;
      const values = this.automationValues(automation, agentUid);
      const item = change('automation', automation.name, before?.id ?? null, before && pick(before, values), values);
      try {
        const id =
          item.action === 'unchanged'
            ? before!.id
            : await this.options.automations.saveManaged(trx, caller, factoryUid, before, values);
        changes.push({ ...item, uid: id });
      } catch (error) {
        // A conflict (409) may have aborted the transaction: it ends the reconcile as it is.
        if (!(error instanceof ApiError) || error.status >= 500 || error.status === 409) throw error;
        errors.push({ file: automation.file, line: null, message: error.detail });
      }
    }
    for (const row of existing.values()) {
      await this.options.automations.deleteManaged(trx, caller.teamUid, row.id);
      changes.push({ kind: 'automation', name: row.name, action: 'delete', uid: row.id });
    }
    return changes;
  }
}

/** The fields of a stored row that a definition sets, to compare with what it says now. */
function pick<T extends object>(row: object, like: T): T {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(like)) picked[key] = (row as Record<string, unknown>)[key];
  return picked as T;
}
