import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesWorkerPattern, workerPatternProblem } from './pattern.js';

test('a worker pattern: * is any run of characters, everything else is literal', () => {
  assert.ok(matchesWorkerPattern('build-*', 'build-7'));
  assert.ok(matchesWorkerPattern('build-*', 'build-'));
  assert.ok(matchesWorkerPattern('*', 'anything'));
  assert.ok(matchesWorkerPattern('box-a', 'box-a'));
  assert.ok(!matchesWorkerPattern('box-a', 'box-ab'));
  assert.ok(!matchesWorkerPattern('build-*', 'xbuild-7'), 'anchored at the start');
  assert.ok(!matchesWorkerPattern('*-box', 'a-box-2'), 'anchored at the end');
  assert.ok(!matchesWorkerPattern('a.b', 'axb'), 'a dot is a dot');
  assert.ok(!matchesWorkerPattern('a+', 'aa'));
});

test('a worker pattern is refused where the worker ID it stands for would be', () => {
  assert.equal(workerPatternProblem('build-*'), null);
  assert.equal(workerPatternProblem('*'), null);
  assert.match(workerPatternProblem('warp*')!, /must not start with "warp"/);
  assert.match(workerPatternProblem('build *')!, /without spaces/);
  assert.match(workerPatternProblem('')!, /required/);
});
