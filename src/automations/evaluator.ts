import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { savedBy } from '../identities/index.js';
import type { Database } from '../platform/db/connect.js';
import type { DB } from '../database.js';
import { ApiError } from '../platform/http/errors.js';
import { PollingLoop } from '../platform/loop.js';
import type { RunRequest, RunsService } from '../runs/index.js';
import { deliveryQueue } from '../webhooks/index.js';
import { deliveryPrompt, payloadFiles } from './envelope.js';
import { checkTriggers } from './service.js';
import * as store from './store.js';
import { observeFirings } from './metrics.js';

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
    const { evaluated, started, refused, created } = await this.db.transaction().execute(async (trx) => {
      const deliveries = await deliveryQueue.claimPending(trx, this.batchSize);
      const requests: RunRequest[] = [];
      const firings: Array<Omit<store.Firing, 'run_id' | 'error'>> = [];
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
          requests.push({
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
          });
          firings.push({ delivery_seq: delivery.seq, automation_id: automation.id });
        }
      }
      const outcomes = await this.options.runs.createWithin(trx, requests);
      await store.insertFirings(
        trx,
        firings.map((firing, i) => {
          const outcome = outcomes[i]!;
          return outcome instanceof ApiError
            ? { ...firing, run_id: null, error: outcome.detail }
            : { ...firing, run_id: outcome.run_id, error: null };
        }),
      );
      await deliveryQueue.markEvaluated(
        trx,
        deliveries.map((delivery) => delivery.seq),
      );
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome instanceof ApiError)
          this.options.log.warn(
            { automation_id: firings[i]!.automation_id, reason: outcome.detail },
            'automation run not started',
          );
      }
      return {
        created: outcomes.created,
        evaluated: deliveries.length,
        started: outcomes.filter((outcome) => !(outcome instanceof ApiError)).length,
        refused: outcomes.filter((outcome) => outcome instanceof ApiError).length,
      };
    });
    observeFirings(started, refused);
    this.options.runs.announceQueued(created);
    return evaluated;
  }
}
