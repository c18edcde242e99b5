/**
 * Random and hostile input against the webhook ingress and the automation API: whatever arrives, the answer is
 * a clear 4xx or a success, never a 5xx. About 400 requests; replay a failure with HANGAR_FUZZ_SEED=<seed>.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server.js';
import { type CreatedWebhook, createWebhook, deliver } from '../support/webhooks.js';

const seed = process.env.HANGAR_FUZZ_SEED ? Number(process.env.HANGAR_FUZZ_SEED) : undefined;
const settings = (numRuns: number) => ({ numRuns, ...(seed === undefined ? {} : { seed }) });

let hangar: TestServer;
const hooks: CreatedWebhook[] = [];
before(async () => {
  hangar = await startTestServer({
    HANGAR_WEBHOOK_RATE_PER_MINUTE: '100000',
    HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE: '100000',
  });
  hooks.push(await createWebhook(hangar, { name: 'fuzz-token', delivery_id_header: 'X-Fuzz-Id' }));
  hooks.push(await createWebhook(hangar, { name: 'fuzz-url', auth_mode: 'url_token' }));
  for (const scheme of ['github', 'stripe', 'standard_webhooks', 'sentry', 'pagerduty', 'vercel']) {
    hooks.push(
      await createWebhook(hangar, {
        name: `fuzz-${scheme}`,
        auth_mode: 'signature',
        signature_scheme: scheme,
        ...(scheme === 'standard_webhooks' ? {} : { secret: 'fuzzing-secret' }),
      }),
    );
  }
});
after(() => hangar?.stop());

const headerNames = fc.constantFrom(
  'authorization',
  'x-hub-signature-256',
  'stripe-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'svix-id',
  'svix-timestamp',
  'svix-signature',
  'sentry-hook-signature',
  'x-pagerduty-signature',
  'x-vercel-signature',
  'x-service-delivery-id',
  'x-fuzz-id',
  'content-type',
  'x-github-delivery',
);
/** Header values the fetch client can send (visible ASCII and spaces). */
const headerValue = fc.oneof(
  fc.string({ unit: fc.constantFrom(...' abcv1=,.tT0123456789+/_-:;Bearer'.split('')), maxLength: 80 }),
  fc.constant('Bearer '),
  fc.constant('t=1,v1=00'),
);

test('the ingress never answers 5xx, whatever the body, headers and path', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 7 }),
      fc.oneof(
        fc.json(),
        fc.string(),
        fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
      ),
      fc.dictionary(headerNames, headerValue, { maxKeys: 5 }),
      fc.oneof(
        fc.constant(''),
        fc.constant('/x'),
        fc
          .string({ unit: fc.constantFrom(...'abc-._~%20'.split('')), minLength: 1, maxLength: 20 })
          .map((token) => `/${token}`),
      ),
      async (index, body, headers, suffix) => {
        const hook = hooks[index]!;
        const response = await deliver(`${hangar.url}/webhooks/w/${hook.uid}${suffix}`, body, headers);
        assert.ok(response.status < 500, `${response.status} ${JSON.stringify(response.body)}`);
        assert.ok([202, 400, 401, 404, 413].includes(response.status), String(response.status));
      },
    ),
    settings(250),
  );
});

/** Arbitrary JSON-ish filters: nested objects, operator-looking keys, values of every type. */
const filterValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { maxLength: 5 }),
    fc.record({ in: fc.anything(), not_in: fc.anything(), exists: fc.anything() }, { requiredKeys: [] }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('in', 'not_in', 'exists')), tie('value'), {
      maxKeys: 3,
    }),
  ),
})).value;

test('automation create and test-filter never answer 5xx, whatever the filter', async () => {
  const hook = hooks[0]!;
  await deliver(hook.url, '{"action":"opened","labels":["bug"],"n":1}', {
    authorization: `Bearer ${hook.secret}`,
    'x-fuzz-id': 'stored',
  });
  let n = 0;
  await fc.assert(
    fc.asyncProperty(filterValue, async (payload) => {
      const filter = { webhook_ids: [hook.uid], payload };
      const created = await hangar.request('POST', '/api/v1/factory/automations', {
        body: { name: `fuzz-${n++}`, prompt: 'p', triggers: [{ provider: 'webhook', event: 'received', filter }] },
      });
      assert.ok([201, 400].includes(created.status), `${created.status} ${JSON.stringify(created.body)}`);
      const tested = await hangar.request('POST', '/api/v1/factory/automations/test-filter', {
        body: { webhook_uid: hook.uid, delivery_id: 'stored', filter },
      });
      assert.ok([200, 400].includes(tested.status), `${tested.status} ${JSON.stringify(tested.body)}`);
      // Saving and testing agree on what a valid filter is.
      assert.equal(created.status === 201, tested.status === 200);
    }),
    settings(150),
  );
});
