import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import {
  ACTIVE_STATES,
  CANCELLABLE_STATES,
  canMove,
  checkMove,
  END_STATES,
  END_TRANSITIONS,
  endEventType,
  isCompletion,
  isTerminal,
  NAMED_TRANSITIONS,
  namesOf,
  OPERATOR_CANCELLABLE_STATES,
  REQUEUABLE_STATES,
  RefusedTransitionError,
  RUN_STATES,
  TERMINAL_STATES,
  transition,
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

/** Every named move written out on its own: name, from-states, to-state, the timeline event, the signal. */
const EXPECTED_NAMES = `
claim            QUEUED                            CLAIMED    oz_run_claimed    run:claimed
dispatch         QUEUED                            PENDING    run_dispatched    run:dispatched
take             PENDING                           CLAIMED    oz_run_claimed    run:claimed
start            CLAIMED                           INPROGRESS agent_started     run:started
succeed          PENDING,CLAIMED,INPROGRESS        SUCCEEDED  oz_run_done       run:ended
block            PENDING,CLAIMED,INPROGRESS        BLOCKED    oz_run_blocked    run:ended
fail             PENDING,CLAIMED,INPROGRESS        FAILED     oz_run_failed     run:ended
error            PENDING,CLAIMED,INPROGRESS        ERROR      oz_run_errored    run:ended
continue         PENDING,CLAIMED,INPROGRESS        QUEUED     run_continued     run:queued
requeue          PENDING,CLAIMED                   QUEUED     run_requeued      run:queued
lose             CLAIMED,INPROGRESS                ERROR      oz_run_errored    run:ended
cancel           QUEUED,CLAIMED,INPROGRESS         CANCELLED  oz_run_cancelled  run:ended
operator_cancel  QUEUED,PENDING,CLAIMED,INPROGRESS CANCELLED  oz_run_cancelled  run:ended
restart          SUCCEEDED,FAILED,ERROR,BLOCKED,CANCELLED QUEUED followup_received run:queued
`;

test('each move has its name, states, timeline event and signal', () => {
  const expected = EXPECTED_NAMES.trim()
    .split('\n')
    .map((line) => {
      const [name, from, to, event, signal] = line.trim().split(/\s+/);
      return { name, from: from!.split(','), to, event, signal };
    });
  assert.deepEqual(
    NAMED_TRANSITIONS.map((move) => ({ ...move, from: [...move.from] })),
    expected,
  );
  for (const move of NAMED_TRANSITIONS) assert.equal(transition(move.name), move);
});

test('the table of moves is the union of the named moves, and every named move is allowed', () => {
  for (const from of RUN_STATES)
    for (const to of RUN_STATES) assert.equal(namesOf(from, to).length > 0, expected(from, to), `${from} -> ${to}`);
  for (const move of NAMED_TRANSITIONS) checkMove(move.from, move.to);
  assert.deepEqual(namesOf('PENDING', 'QUEUED'), ['continue', 'requeue']);
  assert.deepEqual(namesOf('SUCCEEDED', 'CANCELLED'), []);
});

test("each end state is reached by its own end, whose event is the end's timeline event", () => {
  for (const state of END_STATES) {
    assert.equal(END_TRANSITIONS[state].to, state);
    assert.equal(END_TRANSITIONS[state].event, endEventType(state));
    assert.deepEqual(END_TRANSITIONS[state].from, ACTIVE_STATES);
  }
});

test("the engine's claim, made in SQL, records the claim's events", () => {
  // hangar_claim_runs_at writes both events of the move through PENDING (dispatch, then claim) in one statement.
  const sqlText = fs.readFileSync(new URL('./functions.sql', import.meta.url), 'utf8');
  const claimFunction = sqlText.slice(
    sqlText.indexOf('FUNCTION hangar_claim_runs_at'),
    sqlText.indexOf('FUNCTION hangar_claim_runs('),
  );
  assert.ok(
    claimFunction.includes(`(1, '${transition('dispatch').event}'), (2, '${transition('claim').event}')`),
    'hangar_claim_runs_at writes the events of dispatch and claim',
  );
  assert.ok(claimFunction.includes(`SET state = '${transition('claim').to}'`));
});
