import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { savedBy } from '../identities/index.js';
import type { Database } from '../platform/db/connect.js';
import { PollingLoop } from '../platform/loop.js';
import { type RunsService, startTriggeredRuns, type TriggerDecision, type TriggeredRun } from '../runs/index.js';
import { deliveryQueue } from '../webhooks/index.js';
import { deliveryPrompt, payloadFiles } from './envelope.js';
import { observeFirings } from './metrics.js';
import { checkTriggers } from './service.js';
import * as store from './store.js';

export interface EvaluatorOptions {
  database: Database;
  runs: RunsService;
  log: FastifyBaseLogger;
  /** Longest sleep between looks (a NOTIFY can be lost while a connection is down). */
  pollIntervalMs?: number;
  /** Deliveries evaluated per transaction. */
  batchSize?: number;
}

/**
 * Turns accepted deliveries into runs. Every engine process runs one; they share the work with SKIP LOCKED, and
 * a delivery's runs, its firing records and its mark as evaluated commit together, so each matching
 * automation starts exactly one run per delivery, whichever process dies when.
 */
export class AutomationEvaluator {
  private readonly batchSize: number;
  private readonly loop: PollingLoop;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly options: EvaluatorOptions) {
    this.batchSize = options.batchSize ?? 100;
    this.loop = new PollingLoop({
      intervalMs: options.pollIntervalMs ?? 2000,
      // A full batch means more deliveries may be waiting.
      pass: async () => ((await this.evaluatePending()) >= this.batchSize ? 'now' : undefined),
      onError: (error) => options.log.error({ err: error }, 'automation evaluation failed; retrying'),
    });
  }

  private get db(): Kysely<DB> {
    return this.options.database.db;
  }

  async start(): Promise<void> {
    this.unlisten = await this.options.database.listen(deliveryQueue.channel, () => this.poke());
    this.loop.start();
  }

  poke(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.unlisten?.().catch(() => undefined);
  }

  /** One pass over a batch of waiting deliveries. Returns how many it evaluated. */
  async evaluatePending(): Promise<number> {
    const { evaluated, started, refused } = await startTriggeredRuns(this.db, this.options.runs, (trx) =>
      this.decide(trx),
    );
    observeFirings(started, refused);
    return evaluated;
  }

  /**
   * Inside the trigger's transaction: a batch of deliveries claimed, a run asked for per automation whose triggers
   * take one; then each firing recorded with its run or why none started, and the deliveries marked evaluated.
   */
  private async decide(trx: Kysely<DB>): Promise<TriggerDecision<Firing, Evaluated>> {
    const deliveries = await deliveryQueue.claimPending(trx, this.batchSize);
    const runs: TriggeredRun<Firing>[] = [];
    // Deliveries of one webhook arrive together: look its automations up once per batch.
    const selecting = new Map<string, Promise<store.AutomationRow[]>>();
    for (const delivery of deliveries) {
      const payload: unknown = JSON.parse(delivery.body);
      let automations = selecting.get(delivery.webhook_uid);
      if (!automations) {
        automations = store.automationsFor(trx, delivery.team_uid, delivery.webhook_uid);
        selecting.set(delivery.webhook_uid, automations);
      }
      for (const automation of await automations) {
        if (!checkTriggers(automation.triggers, delivery.webhook_uid, payload).would_trigger) continue;
        runs.push({
          item: { delivery_seq: delivery.seq, automation_id: automation.id },
          request: {
            owner: savedBy(delivery.team_uid, automation.created_by_uid),
            body: {
              prompt: deliveryPrompt(automation.prompt, {
                webhookName: delivery.webhook_name,
                webhookUid: delivery.webhook_uid,
                deliveryId: delivery.delivery_id,
              }),
              title: automation.name,
              ...(automation.agent_config ? { config: automation.agent_config } : {}),
              ...(automation.agent_uid ? { agent_identity_uid: automation.agent_uid } : {}),
              team: true,
            },
            origin: {
              source: 'WEBHOOK',
              automation: { id: automation.id, factoryUid: automation.factory_uid },
              triggerUrl: `/factory/webhooks/${encodeURIComponent(delivery.webhook_uid)}`,
            },
            files: payloadFiles(delivery.body),
          },
        });
      }
    }
    return {
      runs,
      record: async (trx, outcomes) => {
        await store.insertFirings(
          trx,
          outcomes.map(({ item: firing, runId, refused }) =>
            refused ? { ...firing, run_id: null, error: refused.detail } : { ...firing, run_id: runId, error: null },
          ),
        );
        await deliveryQueue.markEvaluated(
          trx,
          deliveries.map((delivery) => delivery.seq),
        );
        for (const { item: firing, refused } of outcomes) {
          if (refused)
            this.options.log.warn(
              { automation_id: firing.automation_id, reason: refused.detail },
              'automation run not started',
            );
        }
        const refusedCount = outcomes.filter((outcome) => outcome.refused).length;
        return { evaluated: deliveries.length, started: outcomes.length - refusedCount, refused: refusedCount };
      },
    };
  }
}

/** An automation a delivery fired, before its outcome. */
type Firing = Omit<store.Firing, 'run_id' | 'error'>;

/** A pass's counts, for its return and the firing metrics. */
interface Evaluated {
  evaluated: number;
  started: number;
  refused: number;
}
