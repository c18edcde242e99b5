import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../platform/http/errors.js';
import { activateModelMeter, activeModelMeter, ModelMeter, teamHeld } from './meter.js';

function meter(cap: number | undefined, spentBefore = 0) {
  const reports: Array<Record<string, number>> = [];
  const overCap: number[] = [];
  const instance = new ModelMeter({
    runId: 'r',
    executionId: 1,
    teamUid: 't',
    cap,
    spentBefore,
    report: (usage) => reports.push(usage),
    overCap: (spent) => overCap.push(spent),
  });
  return { meter: instance, reports, overCap };
}

const refused = (error: unknown) => error instanceof ApiError && error.code === 'budget_exceeded';

test('calls made at once are admitted only while the cap has room for what those in flight hold', () => {
  const { meter: m } = meter(1);
  const estimate = { input_tokens: 100, output_tokens: 1000, cost: 0.4 };
  const first = m.admit(estimate, null, 0);
  const second = m.admit(estimate, null, 0);
  const third = m.admit(estimate, null, 0); // 0.8 held < 1: admitted, the last that fits
  assert.throws(() => m.admit(estimate, null, 0), refused);
  assert.ok(Math.abs(m.held - 1.2) < 1e-9);
  // An answer cheaper than its estimate gives the rest back when it settles.
  first.charge({ input_tokens: 100, output_tokens: 10, cost: 0.01 });
  first.settle(true);
  second.settle(false); // an error answer: not charged
  third.charge({ input_tokens: 100, output_tokens: 10, cost: 0.01 });
  third.settle(true);
  assert.equal(m.held, 0);
  assert.ok(Math.abs(m.spent - 0.02) < 1e-9);
  assert.ok(m.admit(estimate, null, 0));
});

test('charges are reported as they grow; the one past the cap is reported once; no usage read costs the estimate', () => {
  const { meter: m, reports, overCap } = meter(1, 0.5);
  const call = m.admit({ input_tokens: 10, output_tokens: 10, cost: 0.1 }, null, 0);
  call.charge({ input_tokens: 1000, output_tokens: 1, cost: 0.2 });
  call.charge({ input_tokens: 1000, output_tokens: 500, cost: 0.7 });
  call.settle(true);
  assert.deepEqual(reports.at(-1), { input_tokens: 1000, output_tokens: 500, total_tokens: 1500, inference_cost: 0.7 });
  assert.deepEqual(overCap, [1.2]);
  assert.throws(() => m.admit({ input_tokens: 0, output_tokens: 0, cost: 0 }, null, 0), refused);

  const { meter: blind } = meter(undefined);
  blind.admit({ input_tokens: 10, output_tokens: 20, cost: 0.3 }, null, 0).settle(true);
  assert.deepEqual(blind.usage(), { input_tokens: 10, output_tokens: 20, total_tokens: 30, inference_cost: 0.3 });
});

test("the team's budget counts what its calls in flight hold; a model without a price leaves the cost out", () => {
  const { meter: m } = meter(undefined);
  const release = activateModelMeter(m);
  try {
    assert.equal(activeModelMeter('r', 1), m);
    const call = m.admit({ input_tokens: 1, output_tokens: 1, cost: 0.5 }, { limit: 2, spent: 1 }, teamHeld('t'));
    assert.equal(teamHeld('t'), 0.5);
    assert.throws(
      () => m.admit({ input_tokens: 1, output_tokens: 1, cost: 0.5 }, { limit: 2, spent: 1.5 }, teamHeld('t')),
      refused,
    );
    call.charge({ input_tokens: 5, output_tokens: 5, cost: undefined });
    call.settle(true);
    assert.equal(m.usage().inference_cost, undefined);
  } finally {
    release();
  }
  assert.equal(activeModelMeter('r', 1), undefined);
});
