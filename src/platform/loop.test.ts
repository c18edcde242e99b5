import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type NextPass, PollingLoop } from './loop.js';

/** A loop whose passes are counted (and whose errors collected); `answer` decides what each pass asks for next. */
function countingLoop(
  options: { intervalMs?: number; waitFirst?: boolean; answer?: (pass: number) => NextPass | Promise<NextPass> } = {},
) {
  const errors: unknown[] = [];
  const state = { passes: 0 };
  const loop = new PollingLoop({
    intervalMs: options.intervalMs ?? 60_000,
    waitFirst: options.waitFirst,
    onError: (error) => errors.push(error),
    pass: async () => {
      state.passes++;
      return options.answer?.(state.passes);
    },
  });
  return { loop, errors, state };
}

test('passes at once, then waits until woken', async () => {
  const { loop, state } = countingLoop();
  loop.start();
  await sleep(20);
  assert.equal(state.passes, 1);
  loop.wake();
  await sleep(20);
  assert.equal(state.passes, 2);
  await loop.stop();
});

/** Resolves once `condition` holds (checked every few ms), so timings under load only make a test slower. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(2);
}

test('passes again after the interval without a wake', async () => {
  const { loop, state } = countingLoop({ intervalMs: 30 });
  const began = Date.now();
  loop.start();
  await until(() => state.passes === 3);
  await loop.stop();
  assert.ok(Date.now() - began >= 60, 'three passes came sooner than two intervals');
});

test('waitFirst waits one interval before the first pass', async () => {
  const { loop, state } = countingLoop({ intervalMs: 50, waitFirst: true });
  const began = Date.now();
  loop.start();
  await until(() => state.passes === 1);
  assert.ok(Date.now() - began >= 49, 'the first pass came before the interval');
  await loop.stop();
});

test("'now' passes again at once, { inMs } shortens the wait, 'stop' ends the loop", async () => {
  const { loop, state } = countingLoop({ answer: (pass) => (pass < 3 ? 'now' : pass === 3 ? { inMs: 10 } : 'stop') });
  loop.start();
  await loop.ended;
  assert.equal(state.passes, 4);
});

test('a wake during a pass is kept: another pass follows at once', async () => {
  let release!: () => void;
  const { loop, state } = countingLoop({
    answer: (pass) =>
      pass === 1 ? new Promise<NextPass>((resolve) => (release = () => resolve(undefined))) : undefined,
  });
  loop.start();
  await sleep(10);
  loop.wake();
  release();
  await sleep(20);
  assert.equal(state.passes, 2);
  await loop.stop();
});

test('stop ends the wait at once and awaits the pass in progress', async () => {
  const waiting = countingLoop();
  waiting.loop.start();
  await sleep(10);
  const began = Date.now();
  await waiting.loop.stop();
  assert.ok(Date.now() - began < 50, 'stop waited for the interval');

  let finished = false;
  const busy = countingLoop({
    answer: async () => {
      await sleep(50);
      finished = true;
      return undefined;
    },
  });
  busy.loop.start();
  await sleep(10);
  await busy.loop.stop();
  assert.equal(finished, true, 'stop returned before the pass in progress ended');
  assert.equal(busy.state.passes, 1, 'a pass began after stop');
});

test('a pass that throws is reported and the loop carries on', async () => {
  const { loop, errors, state } = countingLoop({
    intervalMs: 10,
    answer: (pass) => {
      if (pass === 1) throw new Error('first pass failed');
      return pass === 2 ? 'stop' : undefined;
    },
  });
  loop.start();
  await loop.ended;
  assert.equal(state.passes, 2);
  assert.deepEqual(
    errors.map((error) => (error as Error).message),
    ['first pass failed'],
  );
});

test('a failing report does not end the loop; an error while stopping is not reported', async () => {
  const reported: unknown[] = [];
  let passes = 0;
  let release: (() => void) | undefined;
  const loop = new PollingLoop({
    intervalMs: 1,
    onError: (error) => {
      reported.push(error);
      throw new Error('the report failed too');
    },
    pass: async () => {
      if (++passes < 3) throw new Error('pass failed');
      await new Promise<void>((resolve) => (release = resolve));
      throw new Error('failed while stopping');
    },
  });
  loop.start();
  while (!release) await sleep(5);
  const stopped = loop.stop();
  release();
  await stopped;
  assert.equal(passes, 3, 'a failing report ended the loop');
  assert.deepEqual(
    reported.map((error) => (error as Error).message),
    ['pass failed', 'pass failed'],
  );
});
