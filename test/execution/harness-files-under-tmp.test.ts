import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import { commandFileBinds } from '../../src/execution/sandbox/bwrap/command-files.js';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

const bwrapSkip = resolveSandboxMode(undefined).mode.kind === 'bwrap' ? false : 'bwrap does not work on this machine';

// Issue 26: with the operator file in a checkout under /tmp, a bwrap sandbox (whose /tmp is empty) hid the harness
// script, and the README's example failed with node's "Cannot find module".
describe('a harness whose files live under /tmp, under bwrap', { skip: bwrapSkip, timeout: 120_000 }, () => {
  let root: string;
  let hangar: TestServer;
  before(async () => {
    // /tmp itself, not os.tmpdir(): that is the directory the sandbox replaces.
    root = fs.mkdtempSync('/tmp/hangar-checkout-');
    // As a clone is: readable by everyone (a root server's runs run as the run user).
    fs.chmodSync(root, 0o755);
    // The README's example, as a fresh clone has it.
    fs.cpSync(path.resolve('examples'), path.join(root, 'examples'), { recursive: true });
    // A harness that imports a module of its own package from another directory.
    const pkg = path.join(root, 'agent');
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
    fs.mkdirSync(path.join(pkg, 'lib'));
    fs.writeFileSync(path.join(pkg, 'package.json'), '{"type":"module"}\n');
    fs.writeFileSync(path.join(pkg, 'lib', 'answer.mjs'), "export const answer = 'from the library';\n");
    fs.writeFileSync(
      path.join(pkg, 'bin', 'agent.mjs'),
      "import { answer } from '../lib/answer.mjs';\n" +
        "process.stdout.write(JSON.stringify({ type: 'done', summary: answer }) + '\\n');\n",
    );
    const operator = YAML.parse(fs.readFileSync(path.join(root, 'examples', 'hangar.yaml'), 'utf8'));
    operator.harnesses.packaged = { command: [process.execPath, path.join(pkg, 'bin', 'agent.mjs')] };
    fs.writeFileSync(path.join(root, 'examples', 'hangar.yaml'), YAML.stringify(operator));
    hangar = await startTestServer({
      HANGAR_CONFIG: path.join(root, 'examples', 'hangar.yaml'),
      HANGAR_SANDBOX: 'bwrap',
      // Nothing made visible by hand: the harnesses' own files must be enough.
      HANGAR_SANDBOX_READ_ONLY_PATHS: '',
    });
  });
  after(async () => {
    await hangar?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test("the README's example harness succeeds", async () => {
    const runId = await createRun(hangar, { prompt: 'hi' });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.status_message?.message, 'Echoed the prompt');
  });

  test('a harness sees the rest of its package (the nearest package.json), read-only', async () => {
    const runId = await createRun(hangar, { prompt: 'hi', config: { harness: { type: 'packaged' } } });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    assert.equal(run.status_message?.message, 'from the library');
  });
});

describe('commandFileBinds', () => {
  let root: string;
  before(() => {
    root = fs.realpathSync(fs.mkdtempSync('/tmp/hangar-binds-'));
    fs.mkdirSync(path.join(root, 'pkg', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, 'pkg', 'package.json'), '{}');
    fs.writeFileSync(path.join(root, 'pkg', 'bin', 'run.mjs'), '');
    fs.mkdirSync(path.join(root, 'loose'));
    fs.writeFileSync(path.join(root, 'loose', 'script.sh'), '');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  test('binds the package of a file under /tmp, or its directory; nothing outside /tmp and /run', () => {
    assert.deepEqual(commandFileBinds([path.join(root, 'pkg', 'bin', 'run.mjs')], undefined), [path.join(root, 'pkg')]);
    assert.deepEqual(commandFileBinds(['sh', path.join(root, 'loose', 'script.sh')], '/usr/bin/sh'), [
      path.join(root, 'loose'),
    ]);
    assert.deepEqual(commandFileBinds(['node', '/usr/lib', 'relative/x', '--flag'], '/usr/bin/node'), []);
  });

  test('never all of /tmp: a file directly in it is bound alone; missing paths are skipped', () => {
    const loose = fs.realpathSync(fs.mkdtempSync('/tmp/hangar-file-'));
    const file = `${loose}.mjs`;
    fs.writeFileSync(file, '');
    try {
      assert.deepEqual(commandFileBinds([file, '/tmp/definitely-not-here/x.mjs'], undefined), [file]);
    } finally {
      fs.rmSync(file);
      fs.rmSync(loose, { recursive: true });
    }
  });

  test('a directory argument is never bound (it is data, not the command); a bind inside another is dropped', () => {
    assert.deepEqual(commandFileBinds(['sh', path.join(root, 'loose')], '/usr/bin/sh'), []);
    fs.writeFileSync(path.join(root, 'pkg', 'other.mjs'), '');
    const binds = commandFileBinds(
      [path.join(root, 'pkg', 'bin', 'run.mjs'), path.join(root, 'pkg', 'other.mjs'), path.join(root, 'pkg')],
      undefined,
    );
    assert.deepEqual(binds, [path.join(root, 'pkg')]);
  });
});
