import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import { test } from 'node:test';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import {
  generateStandardWebhooksSecret,
  isStandardWebhooksSecret,
  type SchemeVerdict,
  SIGNATURE_SCHEME_NAMES,
  SIGNATURE_SCHEMES,
  type SignatureSchemeName,
  type SignedDelivery,
} from './index.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const stripeWebhooks = new Stripe('sk_test_x').webhooks;

/** Non-ASCII UTF-8 and whitespace that a JSON parse + stringify round trip would change. */
const RAW_BODY = '{"title":  "Café ☕ — naïve",\n  "count": 1.0 }\n';

type Headers = Record<string, string>;

/** How to produce a correctly signed delivery for each scheme, with the providers' own packages where they exist. */
interface Fixture {
  secret: string;
  otherSecret: string;
  signatureHeader: string;
  malformed: string;
  sign(body: string, secret: string): Promise<Headers> | Headers;
}

const hex = (algorithm: 'sha1' | 'sha256', secret: string, body: string) =>
  createHmac(algorithm, secret).update(body).digest('hex');

function standardHeaders(body: string, secret: string, date = NOW, id = 'msg_2xYz'): Headers {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(date.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(secret).sign(id, date, body),
  };
}

function stripeHeaders(body: string, secret: string, timestamp = NOW_SECONDS): Headers {
  return { 'stripe-signature': stripeWebhooks.generateTestHeaderString({ payload: body, secret, timestamp }) };
}

const FIXTURES: Record<SignatureSchemeName, Fixture> = {
  github: {
    secret: 'gh-secret',
    otherSecret: 'gh-other',
    signatureHeader: 'x-hub-signature-256',
    malformed: 'sha1=0123abcd',
    sign: async (body, secret) => ({
      'x-hub-signature-256': await githubSign(secret, body),
      'x-github-delivery': 'd-1',
    }),
  },
  stripe: {
    secret: 'whsec_stripe_test',
    otherSecret: 'whsec_stripe_other',
    signatureHeader: 'stripe-signature',
    malformed: 'v1=zz',
    sign: (body, secret) => stripeHeaders(body, secret),
  },
  standard_webhooks: {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: generateStandardWebhooksSecret(),
    signatureHeader: 'webhook-signature',
    malformed: 'v1,not*base64!',
    sign: (body, secret) => standardHeaders(body, secret),
  },
  sentry: {
    secret: 'sentry-client-secret',
    otherSecret: 'sentry-other',
    signatureHeader: 'sentry-hook-signature',
    malformed: 'not-hex',
    sign: (body, secret) => ({ 'sentry-hook-signature': hex('sha256', secret, body), 'request-id': 'r-1' }),
  },
  pagerduty: {
    secret: 'pd-secret',
    otherSecret: 'pd-other',
    signatureHeader: 'x-pagerduty-signature',
    malformed: 'v1:abcdef',
    sign: (body, secret) => ({ 'x-pagerduty-signature': `v1=${hex('sha256', secret, body)}`, 'x-webhook-id': 'w-1' }),
  },
  vercel: {
    secret: 'vercel-secret',
    otherSecret: 'vercel-other',
    signatureHeader: 'x-vercel-signature',
    malformed: `${'a'.repeat(64)}`,
    sign: (body, secret) => ({ 'x-vercel-signature': hex('sha1', secret, body) }),
  },
};

function verify(
  name: SignatureSchemeName,
  headers: SignedDelivery['headers'],
  body: Buffer | string,
  secret = FIXTURES[name].secret,
  now = NOW,
): SchemeVerdict {
  return SIGNATURE_SCHEMES[name].verify(
    { headers, body: typeof body === 'string' ? Buffer.from(body) : body },
    secret,
    now,
  );
}

function assertRejected(verdict: SchemeVerdict, reason: RegExp): void {
  assert.equal(verdict.ok, false);
  if (!verdict.ok) assert.match(verdict.reason, reason);
}

test('the index lists every scheme under its own name', () => {
  assert.deepEqual([...SIGNATURE_SCHEME_NAMES].sort(), [
    'github',
    'pagerduty',
    'sentry',
    'standard_webhooks',
    'stripe',
    'vercel',
  ]);
  for (const name of SIGNATURE_SCHEME_NAMES) assert.equal(SIGNATURE_SCHEMES[name].name, name);
  assert.deepEqual(SIGNATURE_SCHEMES.github.deliveryIdHeaders, ['x-github-delivery']);
  assert.deepEqual(SIGNATURE_SCHEMES.stripe.deliveryIdHeaders, []);
  assert.deepEqual(SIGNATURE_SCHEMES.standard_webhooks.deliveryIdHeaders, ['webhook-id', 'svix-id']);
  assert.deepEqual(SIGNATURE_SCHEMES.sentry.deliveryIdHeaders, ['request-id']);
  assert.deepEqual(SIGNATURE_SCHEMES.pagerduty.deliveryIdHeaders, ['x-webhook-id']);
  assert.deepEqual(SIGNATURE_SCHEMES.vercel.deliveryIdHeaders, []);
});

for (const name of SIGNATURE_SCHEME_NAMES) {
  const fixture = FIXTURES[name];

  test(`${name}: accepts a delivery signed by the provider`, async () => {
    assert.deepEqual(verify(name, await fixture.sign(RAW_BODY, fixture.secret), RAW_BODY), { ok: true });
  });

  test(`${name}: rejects a delivery signed with another secret`, async () => {
    assert.deepEqual(verify(name, await fixture.sign(RAW_BODY, fixture.otherSecret), RAW_BODY), {
      ok: false,
      reason: 'signature does not match',
    });
  });

  test(`${name}: rejects a body with one byte changed`, async () => {
    const headers = await fixture.sign(RAW_BODY, fixture.secret);
    const tampered = Buffer.from(RAW_BODY);
    tampered[tampered.length - 2]! ^= 0x01;
    assertRejected(verify(name, headers, tampered), /^signature does not match$/);
  });

  test(`${name}: verifies the raw bytes, not a re-serialized or re-decoded body`, async () => {
    const headers = await fixture.sign(RAW_BODY, fixture.secret);
    assertRejected(verify(name, headers, JSON.stringify(JSON.parse(RAW_BODY))), /does not match/);
    assertRejected(verify(name, headers, Buffer.from(RAW_BODY, 'latin1')), /does not match/);
    assert.equal(verify(name, headers, Buffer.from(RAW_BODY, 'utf8')).ok, true);
  });

  test(`${name}: rejects a missing or malformed signature header`, async () => {
    const headers = await fixture.sign(RAW_BODY, fixture.secret);
    assertRejected(
      verify(name, { ...headers, [fixture.signatureHeader]: undefined }, RAW_BODY),
      /^missing .*signature.* header$/i,
    );
    assertRejected(verify(name, { ...headers, [fixture.signatureHeader]: '  ' }, RAW_BODY), /^missing /);
    assertRejected(verify(name, { ...headers, [fixture.signatureHeader]: fixture.malformed }, RAW_BODY), /^malformed /);
    const signature = headers[fixture.signatureHeader]!;
    assertRejected(
      verify(name, { ...headers, [fixture.signatureHeader]: [signature, signature] }, RAW_BODY),
      /more than one/,
    );
    assert.equal(verify(name, { ...headers, [fixture.signatureHeader]: [signature] }, RAW_BODY).ok, true);
  });

  test(`${name}: rejects an empty secret and never puts the secret or the signature in a reason`, async () => {
    const headers = await fixture.sign(RAW_BODY, fixture.secret);
    assertRejected(verify(name, headers, RAW_BODY, ''), /secret/);
    const verdict = verify(name, headers, RAW_BODY, fixture.otherSecret);
    assert.equal(verdict.ok, false);
    if (!verdict.ok) {
      assert.ok(!verdict.reason.includes(fixture.otherSecret));
      for (const value of Object.values(headers)) if (value.length > 8) assert.ok(!verdict.reason.includes(value));
    }
  });

  test(`${name}: garbage in any header gives a verdict, not an exception`, () => {
    const junk = [
      '',
      '=',
      ',',
      ' , ',
      'v1=',
      'v1,',
      't=',
      't=abc,v1=00',
      '\u0000\uffff',
      'sha256=',
      'x'.repeat(10_000),
    ];
    for (const value of junk) {
      const headers = Object.fromEntries(
        [
          'x-hub-signature-256',
          'stripe-signature',
          'webhook-id',
          'webhook-timestamp',
          'webhook-signature',
          'sentry-hook-signature',
          'x-pagerduty-signature',
          'x-vercel-signature',
        ].map((header) => [header, value]),
      );
      assert.equal(verify(name, headers, Buffer.alloc(0)).ok, false, JSON.stringify(value));
    }
  });
}

test('stripe: enforces the 5-minute window on the signed timestamp, both ways', () => {
  const { secret } = FIXTURES.stripe;
  assertRejected(
    verify('stripe', stripeHeaders(RAW_BODY, secret, NOW_SECONDS - 301), RAW_BODY),
    /^timestamp is older than 5 minutes$/,
  );
  assert.equal(verify('stripe', stripeHeaders(RAW_BODY, secret, NOW_SECONDS - 300), RAW_BODY).ok, true);
  assert.equal(verify('stripe', stripeHeaders(RAW_BODY, secret, NOW_SECONDS + 300), RAW_BODY).ok, true);
  assertRejected(verify('stripe', stripeHeaders(RAW_BODY, secret, NOW_SECONDS + 301), RAW_BODY), /in the future/);
});

test('stripe: the timestamp is covered by the signature', () => {
  const header = stripeHeaders(RAW_BODY, FIXTURES.stripe.secret)['stripe-signature']!;
  const moved = header.replace(`t=${NOW_SECONDS}`, `t=${NOW_SECONDS + 1}`);
  assertRejected(verify('stripe', { 'stripe-signature': moved }, RAW_BODY), /^signature does not match$/);
});

test('stripe: any v1 matching is enough; v0 and unknown schemes are ignored', () => {
  const { secret, otherSecret } = FIXTURES.stripe;
  const signatureWith = (key: string) => stripeHeaders(RAW_BODY, key)['stripe-signature']!.split(',')[1]!;
  const header = `t=${NOW_SECONDS},${signatureWith(otherSecret)},v0=${'0'.repeat(64)},${signatureWith(secret)},v9=whatever`;
  assert.equal(verify('stripe', { 'stripe-signature': header }, RAW_BODY).ok, true);
  assertRejected(
    verify('stripe', { 'stripe-signature': `t=${NOW_SECONDS},v0=${'0'.repeat(64)}` }, RAW_BODY),
    /no v1 signature/,
  );
  assertRejected(verify('stripe', { 'stripe-signature': signatureWith(secret) }, RAW_BODY), /no valid timestamp/);
  assertRejected(
    verify('stripe', { 'stripe-signature': `t=${NOW_SECONDS},t=${NOW_SECONDS},${signatureWith(secret)}` }, RAW_BODY),
    /more than one timestamp/,
  );
});

test('standard webhooks: enforces the 5-minute window on the signed timestamp, both ways', () => {
  const { secret } = FIXTURES.standard_webhooks;
  const at = (offsetSeconds: number) =>
    standardHeaders(RAW_BODY, secret, new Date(NOW.getTime() + offsetSeconds * 1000));
  assertRejected(verify('standard_webhooks', at(-301), RAW_BODY), /^timestamp is older than 5 minutes$/);
  assert.equal(verify('standard_webhooks', at(-300), RAW_BODY).ok, true);
  assert.equal(verify('standard_webhooks', at(300), RAW_BODY).ok, true);
  assertRejected(verify('standard_webhooks', at(301), RAW_BODY), /in the future/);
});

test('standard webhooks: the id and timestamp are covered by the signature', () => {
  const headers = standardHeaders(RAW_BODY, FIXTURES.standard_webhooks.secret);
  assertRejected(
    verify('standard_webhooks', { ...headers, 'webhook-id': 'msg_other' }, RAW_BODY),
    /^signature does not match$/,
  );
  assertRejected(
    verify('standard_webhooks', { ...headers, 'webhook-timestamp': String(NOW_SECONDS - 1) }, RAW_BODY),
    /^signature does not match$/,
  );
  assertRejected(
    verify('standard_webhooks', { ...headers, 'webhook-id': undefined }, RAW_BODY),
    /^missing webhook-id header$/,
  );
  assertRejected(
    verify('standard_webhooks', { ...headers, 'webhook-timestamp': undefined }, RAW_BODY),
    /^missing webhook-timestamp header$/,
  );
  assertRejected(
    verify('standard_webhooks', { ...headers, 'webhook-timestamp': '17e8' }, RAW_BODY),
    /^malformed webhook-timestamp header$/,
  );
});

test('standard webhooks: any v1 signature matching is enough; other versions are ignored', () => {
  const { secret, otherSecret } = FIXTURES.standard_webhooks;
  const headers = standardHeaders(RAW_BODY, secret);
  const wrong = standardHeaders(RAW_BODY, otherSecret)['webhook-signature'];
  const signatures = `${wrong} v1a,${Buffer.alloc(64).toString('base64')}  ${headers['webhook-signature']}`;
  assert.equal(verify('standard_webhooks', { ...headers, 'webhook-signature': signatures }, RAW_BODY).ok, true);
  assertRejected(
    verify(
      'standard_webhooks',
      { ...headers, 'webhook-signature': `v1a,${Buffer.alloc(64).toString('base64')}` },
      RAW_BODY,
    ),
    /no v1 signature/,
  );
});

test('standard webhooks: accepts Svix deliveries under the svix-* header names', () => {
  const { secret } = FIXTURES.standard_webhooks;
  const id = 'msg_svix_1';
  const headers = {
    'svix-id': id,
    'svix-timestamp': String(NOW_SECONDS),
    'svix-signature': new SvixWebhook(secret).sign(id, NOW, RAW_BODY),
  };
  assert.deepEqual(verify('standard_webhooks', headers, RAW_BODY), { ok: true });
  assertRejected(
    verify('standard_webhooks', headers, RAW_BODY, FIXTURES.standard_webhooks.otherSecret),
    /^signature does not match$/,
  );
  assertRejected(
    verify('standard_webhooks', { ...headers, 'svix-signature': undefined }, RAW_BODY),
    /^missing webhook-signature header$/,
  );
  const old = {
    ...headers,
    'svix-timestamp': String(NOW_SECONDS - 301),
    'svix-signature': new SvixWebhook(secret).sign(id, new Date(NOW.getTime() - 301_000), RAW_BODY),
  };
  assertRejected(verify('standard_webhooks', old, RAW_BODY), /older than 5 minutes/);
});

test('standard webhooks: the key is the base64 after whsec_, with or without the prefix', () => {
  const { secret } = FIXTURES.standard_webhooks;
  const headers = standardHeaders(RAW_BODY, secret);
  assert.equal(verify('standard_webhooks', headers, RAW_BODY, secret.slice('whsec_'.length)).ok, true);
  assertRejected(verify('standard_webhooks', headers, RAW_BODY, 'whsec_not base64!'), /not a Standard Webhooks secret/);
});

test('pagerduty: any of several v1 signatures matching is enough, spaces allowed', () => {
  const { secret, otherSecret } = FIXTURES.pagerduty;
  const header = `v1=${hex('sha256', otherSecret, RAW_BODY)}, v1=${hex('sha256', secret, RAW_BODY)}`;
  assert.equal(verify('pagerduty', { 'x-pagerduty-signature': header }, RAW_BODY).ok, true);
  assertRejected(
    verify('pagerduty', { 'x-pagerduty-signature': `v1=${hex('sha256', otherSecret, RAW_BODY)}` }, RAW_BODY),
    /does not match/,
  );
  assertRejected(
    verify('pagerduty', { 'x-pagerduty-signature': `v2=${hex('sha256', secret, RAW_BODY)}` }, RAW_BODY),
    /no v1 signature/,
  );
});

test('hex signatures are verified over bytes that are not valid UTF-8', () => {
  const body = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x20, 0xc3, 0x7d]);
  const mac = (algorithm: 'sha1' | 'sha256', secret: string) =>
    createHmac(algorithm, secret).update(body).digest('hex');
  assert.equal(
    verify('github', { 'x-hub-signature-256': `sha256=${mac('sha256', FIXTURES.github.secret)}` }, body).ok,
    true,
  );
  assert.equal(
    verify('sentry', { 'sentry-hook-signature': mac('sha256', FIXTURES.sentry.secret).toUpperCase() }, body).ok,
    true,
  );
  assert.equal(
    verify('pagerduty', { 'x-pagerduty-signature': `v1=${mac('sha256', FIXTURES.pagerduty.secret)}` }, body).ok,
    true,
  );
  assert.equal(verify('vercel', { 'x-vercel-signature': mac('sha1', FIXTURES.vercel.secret) }, body).ok, true);
  // Decoding to a string and back replaces the invalid bytes, so the signature no longer matches.
  assertRejected(
    verify('vercel', { 'x-vercel-signature': mac('sha1', FIXTURES.vercel.secret) }, body.toString('utf8')),
    /does not match/,
  );
});

test('generated Standard Webhooks secrets have the expected shape and work with the reference library', () => {
  const secret = generateStandardWebhooksSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.notEqual(generateStandardWebhooksSecret(), secret);
  assert.equal(isStandardWebhooksSecret(secret), true);
  assert.equal(verify('standard_webhooks', standardHeaders(RAW_BODY, secret), RAW_BODY, secret).ok, true);
});

test('recognizes Standard Webhooks secrets', () => {
  assert.equal(isStandardWebhooksSecret(FIXTURES.standard_webhooks.secret), true);
  assert.equal(isStandardWebhooksSecret(FIXTURES.standard_webhooks.secret.slice('whsec_'.length)), true);
  assert.equal(isStandardWebhooksSecret(`whsec_${Buffer.alloc(64, 1).toString('base64')}`), true);
  assert.equal(isStandardWebhooksSecret(`whsec_${Buffer.alloc(16, 1).toString('base64')}`), false);
  assert.equal(isStandardWebhooksSecret(`whsec_${Buffer.alloc(65, 1).toString('base64')}`), false);
  assert.equal(isStandardWebhooksSecret('whsec_'), false);
  assert.equal(isStandardWebhooksSecret(''), false);
  assert.equal(isStandardWebhooksSecret('whsec_has spaces and !punctuation?'), false);
});

test('docs/webhooks.md has a row for every scheme, and no other', () => {
  const doc = fs.readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');
  // The table whose header row starts with `signature_scheme`, up to the blank line that ends it.
  const table = doc.slice(doc.indexOf('| `signature_scheme` |')).split('\n\n')[0]!;
  const documented = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]).slice(1);
  assert.deepEqual(documented.sort(), [...SIGNATURE_SCHEME_NAMES].sort());
});
