import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import { Batcher } from '../platform/db/batcher.js';
import { lookUpAndCount, type SenderCounts, type SenderLookup } from './limits.js';
import { type NewDelivery, recordAccepted, type WebhookRow } from './store.js';
import type { DeliveryStatus } from './tables.js';

/**
 * The two statements every delivery makes (finding its webhook while counting its sender, and recording it),
 * each coalesced with the same statement of the deliveries arriving alongside: under load a commit per delivery
 * is what limits the ingress. Alone, a delivery's statement goes out at once; a 202 still waits for its commit.
 */
export class IngressWrites {
  private readonly lookups: Batcher<SenderLookup, { webhook: WebhookRow; counts: SenderCounts } | undefined>;
  private readonly accepts: Batcher<NewDelivery, DeliveryStatus>;

  constructor(db: Kysely<DB>) {
    const options = { maxBatch: 100, maxInFlight: 2 };
    this.lookups = new Batcher({ ...options, write: (items) => lookUpAndCount(db, items) });
    this.accepts = new Batcher({ ...options, write: (items) => recordAccepted(db, items) });
  }

  lookUp(uid: string, sender: string) {
    return this.lookups.submit({ uid, sender });
  }

  accept(delivery: NewDelivery): Promise<DeliveryStatus> {
    return this.accepts.submit(delivery);
  }
}
