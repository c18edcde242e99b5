import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ACTIVE_STATES,
  canMove,
  CANCELLABLE_STATES,
  checkMove,
  END_STATES,
  endEventType,
  isCompletion,
  isTerminal,
  OPERATOR_CANCELLABLE_STATES,
  RefusedTransitionError,
  REQUEUABLE_STATES,
  RUN_STATES,
  TERMINAL_STATES,
} from './states.js';

/** The expected state machine, written out on its own: a row per from-state, x where the move is allowed. */
const EXPECTED = `
from/to     QUEUED PENDING CLAIMED INPROGRESS SUCCEEDED FAILED BLOCKED ERROR CANCELLED
QUEUED      .      x       x       .          .         .      .       .     x
PENDING     x      .       x       .          x         x      x       x     x
CLAIMED     x      .       .       x          x         x      x       x     x
INPROGRESS  x      .       .       .          x         x      x       x     x
SUCCEEDED   x      .       .       .          .         .      .       .     .
FAILED      x      .       .       .          .         .      .       .     .
BLOCKED     x      .       .       .          .         .      .       .     .
ERROR       x      .       .       .          .         .      .       .     .
CANCELLED   x      .       .       .          .         .      .       .     .
`;
const [header, ...rows] = EXPECTED.trim()
  .split('\n')
  .map((line) => line.trim().split(/\s+/));
const COLUMNS = header!.slice(1);
const ROWS = new Map(rows.map(([from, ...marks]) => [from!, marks]));

function expected(from: string, to: string): boolean {
  const marks = ROWS.get(from)!;
  assert.equal(marks.length, COLUMNS.length, `row ${from} of the expected table`);
  return marks[COLUMNS.indexOf(to)] === 'x';
}

test('the expected table covers every state', () => {
  assert.deepEqual([...COLUMNS].sort(), [...RUN_STATES].sort());
  assert.deepEqual([...ROWS.keys()].sort(), [...RUN_STATES].sort());
});

test('every allowed move is allowed and every other move is refused', () => {
  for (const from of RUN_STATES) {
    for (const to of RUN_STATES) {
      const allowed = expected(from, to);
      assert.equal(canMove(from, to), allowed, `${from} -> ${to} should be ${allowed ? 'allowed' : 'refused'}`);
      if (allowed) checkMove(from, to);
      else assert.throws(() => checkMove(from, to), RefusedTransitionError, `${from} -> ${to}`);
    }
  }
});

test('a state the machine does not know moves nowhere', () => {
  assert.equal(canMove('RUNNING', 'QUEUED'), false);
  assert.throws(() => checkMove(['QUEUED', 'RUNNING'], 'CANCELLED'), RefusedTransitionError);
});

test('the groups agree with the moves the code makes from them', () => {
  checkMove(CANCELLABLE_STATES, 'CANCELLED');
  checkMove(OPERATOR_CANCELLABLE_STATES, 'CANCELLED');
  checkMove(REQUEUABLE_STATES, 'QUEUED');
  checkMove(TERMINAL_STATES, 'QUEUED');
  // An execution ends from any held state, or goes back to the queue when follow-ups wait.
  for (const end of [...END_STATES, 'QUEUED' as const]) checkMove(ACTIVE_STATES, end);
  // A lease expiring: INPROGRESS ends ERROR, the others go back to the queue.
  checkMove('INPROGRESS', 'ERROR');
  assert.deepEqual(
    RUN_STATES.filter((state) => isTerminal(state)),
    [...TERMINAL_STATES].sort((a, b) => RUN_STATES.indexOf(a) - RUN_STATES.indexOf(b)),
  );
  for (const state of END_STATES) assert.ok(isTerminal(state));
});

test('each end writes its own timeline event; success and a question are completions', () => {
  assert.deepEqual(
    END_STATES.map((state) => [state, endEventType(state), isCompletion(state)]),
    [
      ['SUCCEEDED', 'oz_run_done', true],
      ['FAILED', 'oz_run_failed', false],
      ['ERROR', 'oz_run_errored', false],
      ['BLOCKED', 'oz_run_blocked', true],
    ],
  );
});
