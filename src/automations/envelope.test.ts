import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deliveryPrompt, PAYLOAD_FILE } from './envelope.js';

test('the envelope follows the prompt, names the webhook and delivery, and marks the payload untrusted', () => {
  const prompt = deliveryPrompt('Triage the new issue.\n', {
    webhookName: 'issues',
    webhookUid: 'U'.repeat(22),
    deliveryId: 'evt-42',
  });
  assert.ok(prompt.startsWith('Triage the new issue.\n\n---\n'));
  assert.match(prompt, /webhook "issues" \(UUUUUUUUUUUUUUUUUUUUUU\), delivery ID evt-42/);
  assert.ok(prompt.includes(PAYLOAD_FILE));
  assert.match(prompt, /request to act on/);
  assert.match(prompt, /untrusted/);
});
