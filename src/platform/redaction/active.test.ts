import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activateRedactor, activeRedactor, redactActiveValues, setStandingRedactor } from './active.js';
import { Redactor } from './redactor.js';

test('log lines lose the values of running executions and the standing ones; an ended execution is forgotten', () => {
  setStandingRedactor(new Redactor().add('OPENAI_API_KEY', 'sk-operator-key-1'));
  const redactor = new Redactor().add('TEAM_SECRET', 'team"secret\\value');
  const deactivate = activateRedactor('run-1', 1, redactor);
  const line = JSON.stringify({ msg: 'failed with team"secret\\value and sk-operator-key-1' });
  assert.equal(
    redactActiveValues(line),
    JSON.stringify({ msg: 'failed with [REDACTED:TEAM_SECRET] and [REDACTED:OPENAI_API_KEY]' }),
  );
  assert.equal(activeRedactor('run-1', 1), redactor);
  deactivate();
  assert.equal(activeRedactor('run-1', 1), undefined);
  assert.ok(redactActiveValues(line).includes('team\\"secret'));
  setStandingRedactor(undefined);
});
