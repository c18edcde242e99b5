import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyHash, deliveryIdentity } from './identity.js';

const body = Buffer.from('{"a":1}');
const none = { configuredHeader: null, providerHeaders: [] as string[] };

test('the configured header wins, then the provider header, then X-Service-Delivery-Id, then the body hash', () => {
  const headers = { 'x-my-id': 'mine', 'x-github-delivery': 'gh', 'x-service-delivery-id': 'svc' };
  assert.equal(
    deliveryIdentity(headers, body, { configuredHeader: 'X-My-Id', providerHeaders: ['x-github-delivery'] }),
    'mine',
  );
  assert.equal(
    deliveryIdentity(headers, body, { configuredHeader: null, providerHeaders: ['x-github-delivery'] }),
    'gh',
  );
  assert.equal(deliveryIdentity(headers, body, none), 'svc');
  assert.equal(deliveryIdentity({}, body, none), bodyHash(body));
});

test('blank headers are skipped; identical bodies share an identity; no body and no header gives none', () => {
  assert.equal(deliveryIdentity({ 'x-service-delivery-id': '  ' }, body, none), bodyHash(Buffer.from('{"a":1}')));
  assert.notEqual(bodyHash(Buffer.from('{"a":1}')), bodyHash(Buffer.from('{"a": 1}')));
  assert.equal(deliveryIdentity({}, null, none), null);
});

test('an overlong header value is stored as its hash', () => {
  const long = 'x'.repeat(500);
  assert.equal(deliveryIdentity({ 'x-service-delivery-id': long }, body, none), bodyHash(Buffer.from(long)));
});
