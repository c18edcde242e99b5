import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RefusalAccount, refusalsMarkdown } from './account.js';

test('refusals are counted per phase, host and port, with first and last times and the line that allows them', () => {
  const account = new RefusalAccount();
  const base = { run: 'r', reason: 'not_allowed' as const, detail: '' };
  assert.equal(
    account.add({ ...base, phase: 'agent', host: 'paste.example', port: 443, at: '2026-01-01T00:00:01Z' }).first,
    true,
  );
  assert.equal(
    account.add({ ...base, phase: 'agent', host: 'paste.example', port: 443, at: '2026-01-01T00:00:05Z' }).first,
    false,
  );
  account.add({ ...base, phase: 'setup', host: 'paste.example', port: 443, at: '2026-01-01T00:00:02Z' });
  account.add({ ...base, phase: 'agent', host: 'mirror.example', port: 8080, at: '2026-01-01T00:00:03Z' });
  account.add({
    ...base,
    reason: 'private_address',
    phase: 'agent',
    host: 'inside.example',
    at: '2026-01-01T00:00:04Z',
  });
  assert.deepEqual(account.list(), [
    {
      phase: 'agent',
      host: 'paste.example',
      port: 443,
      reason: 'not_allowed',
      attempts: 2,
      first_at: '2026-01-01T00:00:01Z',
      last_at: '2026-01-01T00:00:05Z',
      allow_line: 'paste.example',
    },
    {
      phase: 'setup',
      host: 'paste.example',
      port: 443,
      reason: 'not_allowed',
      attempts: 1,
      first_at: '2026-01-01T00:00:02Z',
      last_at: '2026-01-01T00:00:02Z',
      allow_line: 'paste.example',
    },
    {
      phase: 'agent',
      host: 'mirror.example',
      port: 8080,
      reason: 'not_allowed',
      attempts: 1,
      first_at: '2026-01-01T00:00:03Z',
      last_at: '2026-01-01T00:00:03Z',
      allow_line: 'mirror.example:8080',
    },
    {
      phase: 'agent',
      host: 'inside.example',
      reason: 'private_address',
      attempts: 1,
      first_at: '2026-01-01T00:00:04Z',
      last_at: '2026-01-01T00:00:04Z',
    },
  ]);
  const text = refusalsMarkdown(account.list());
  assert.match(text, /^These hosts were refused/);
  assert.match(
    text,
    /- `paste\.example:443` \(agent, not allowed, 2 times\); to allow it: `"paste\.example"` in `network\.agent\.allow`/,
  );
  assert.match(text, /- `inside\.example \(DNS\)` \(agent, private address, once\)\n/);
  assert.equal(refusalsMarkdown([]), '');
});
