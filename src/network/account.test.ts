import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RefusalAccount, refusalsFromEvents, refusalsMarkdown } from './account.js';

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

test("a run's account from its timeline: an execution's closing account wins over its first refusals, executions add up", () => {
  const refused = (execution: number, host: string, at: string) => ({
    execution_id: String(execution),
    event_type: 'network_refused',
    payload: { phase: 'agent', host, port: 443, reason: 'not_allowed', first_at: at, allow_line: host },
  });
  const account = (execution: number, attempts: number, first: string, last: string) => ({
    execution_id: String(execution),
    event_type: 'network_refusals',
    payload: {
      refusals: [
        { phase: 'agent', host: 'a.test', port: 443, reason: 'not_allowed', attempts, first_at: first, last_at: last },
      ],
    },
  });
  const entries = refusalsFromEvents([
    refused(1, 'a.test', '2026-01-01T00:00:01Z'),
    account(1, 3, '2026-01-01T00:00:01Z', '2026-01-01T00:00:05Z'),
    // A second execution still running: its first refusals count once each.
    refused(2, 'a.test', '2026-01-02T00:00:00Z'),
    refused(2, 'b.test', '2026-01-02T00:00:01Z'),
  ]);
  assert.deepEqual(
    entries.map(({ host, attempts, first_at, last_at }) => ({ host, attempts, first_at, last_at })),
    [
      { host: 'a.test', attempts: 4, first_at: '2026-01-01T00:00:01Z', last_at: '2026-01-02T00:00:00Z' },
      { host: 'b.test', attempts: 1, first_at: '2026-01-02T00:00:01Z', last_at: '2026-01-02T00:00:01Z' },
    ],
  );
});
