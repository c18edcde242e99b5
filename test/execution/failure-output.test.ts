import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { harnessEnv, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 26: a failed run's reason was node's closing "Node.js v20" line, npm's tail its help text, and the output
// of the failing command showed nowhere but a timeline payload.
describe('a failed run explains itself: the meaningful error line and the failing command output', () => {
  let hangar: TestServer;
  before(async () => {
    hangar = await startTestServer(harnessEnv());
  });
  after(() => hangar.stop());

  const ended = (runId: string) => waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');

  test("a harness's exception is the status message, and its stderr is failure_output", async () => {
    const nodeCrash = [
      'node:internal/modules/cjs/loader:1228',
      '  throw err;',
      '  ^',
      '',
      "Error: Cannot find module '/tmp/checkout/examples/echo-harness.mjs'",
      '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
      '    at node:internal/main/run_main_module:28:49 {',
      "  code: 'MODULE_NOT_FOUND',",
      '  requireStack: []',
      '}',
      '',
      'Node.js v20.20.2',
    ].join('\n');
    const runId = await createRun(hangar, { prompt: script({ stderr: nodeCrash }, { exit: 1 }) });
    const run = await ended(runId);
    assert.equal(run.state, 'FAILED');
    assert.equal(
      run.status_message.message,
      "The harness script exited with code 1: Error: Cannot find module '/tmp/checkout/examples/echo-harness.mjs'",
    );
    assert.equal(run.failure_output.command, 'harness script');
    assert.deepEqual(run.failure_output.lines, nodeCrash.split('\n'));
  });

  test("a failed setup command's output keeps npm's error, not only the help text printed after it", async () => {
    const help = Array.from({ length: 40 }, (_, index) => `npm error   --option-${index} described here`);
    const output = [
      'npm error code EUSAGE',
      'npm error',
      'npm error The `npm ci` command can only install with an existing package-lock.json',
      ...help,
    ];
    const environment = await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: `npm env ${Math.random()}`,
        setup_commands: [`printf '%s\\n' ${output.map((line) => `'${line}'`).join(' ')} >&2; exit 1`],
      },
    });
    assert.equal(environment.status, 201, JSON.stringify(environment.body));
    const runId = await createRun(hangar, { prompt: 'x', config: { environment_id: environment.body.uid } });
    const run = await ended(runId);
    assert.equal(run.state, 'FAILED');
    assert.match(
      run.status_message.message,
      /exited with code 1: npm error The `npm ci` command can only install with an existing package-lock.json$/,
    );
    const lines: string[] = run.failure_output.lines;
    assert.match(run.failure_output.command, /^printf/);
    assert.equal(lines.length, 20);
    assert.deepEqual(lines.slice(0, 3), output.slice(0, 3));
    assert.match(lines[8]!, /^\[\.\.\. \d+ lines \.\.\.\]$/);
    assert.equal(lines.at(-1), output.at(-1));
  });

  test('a run that succeeds, or failed by its own final event, has no failure_output', async () => {
    const ok = await ended(await createRun(hangar, { prompt: script({ stderr: 'a warning' }, { done: 'ok' }) }));
    assert.equal(ok.state, 'SUCCEEDED');
    assert.equal(ok.failure_output, undefined);
    const failed = await ended(await createRun(hangar, { prompt: script({ fail: 'tests do not pass' }) }));
    assert.equal(failed.state, 'FAILED');
    assert.equal(failed.failure_output, undefined);
  });
});
