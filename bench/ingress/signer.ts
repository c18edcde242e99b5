// Request hooks for the load generator (see RequestHooksModule in ../runs-api/load.ts): every delivery gets a
// unique `webhook-id`, the current `webhook-timestamp` and a valid Standard Webhooks `webhook-signature`, signed
// as autocannon builds it, in the load generator's process; answers are tallied for the loss check.
import { createHmac, randomUUID } from 'node:crypto';
import type { RequestHooks, RequestHooksFactory } from '../runs-api/load.js';

export interface SignerConfig {
  /** The webhook's `whsec_<base64>` secret, as the create call returned it. */
  secret: string;
}

/** What the parent gets after each run of the load generator. */
export interface SignerTally {
  /** Requests built and written (each one is sent once). */
  sent: number;
  /** `delivery_id` of every 202 answer, in order. */
  acknowledged: string[];
  /** Other answers, by status (the benchmark aborts on any). */
  others: Record<string, number>;
}

/** The HMAC key of a Standard Webhooks secret: the base64 after `whsec_`. */
export function signingKey(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) throw new Error(`not a Standard Webhooks secret: ${secret.slice(0, 8)}...`);
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

/** The three Standard Webhooks headers of one delivery: `v1,<base64 HMAC-SHA256 of id.timestamp.body>`. */
export function signedHeaders(key: Buffer, body: string, id = `msg_${randomUUID()}`): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

const makeSigner: RequestHooksFactory = ({ secret }: SignerConfig): RequestHooks => {
  const key = signingKey(secret);
  let tally: SignerTally = { sent: 0, acknowledged: [], others: {} };
  return {
    setupRequest(request) {
      tally.sent++;
      // autocannon hands over a fresh copy of the request and its headers on every build.
      request.headers = { ...request.headers, ...signedHeaders(key, request.body ?? '') };
      return request;
    },
    onResponse(status, body) {
      if (status === 202) tally.acknowledged.push((JSON.parse(body) as { delivery_id: string }).delivery_id);
      else tally.others[status] = (tally.others[status] ?? 0) + 1;
    },
    tally() {
      const done = tally;
      tally = { sent: 0, acknowledged: [], others: {} };
      return done;
    },
  };
};
export default makeSigner;
