import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';

/**
 * scripts/check-sandbox-kinds.mjs (in `npm run lint:deps`, so in `npm test`) fails the build on a kind check outside
 * src/execution/sandbox/mode.ts: run here on small trees of its own, so that the rule is seen to refuse each form and
 * to pass what asks the port.
 */

const SCRIPT = path.resolve('scripts/check-sandbox-kinds.mjs');
const roots: string[] = [];
after(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** Runs the check in a tree of these files (with mode.ts and config.ts, the files it allows, as they are). */
async function check(files: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-kinds-'));
  roots.push(root);
  const tree = {
    'src/execution/sandbox/mode.ts': "if (value === 'container') kind = 'container';\n",
    'src/config.ts': "const sandbox = raw === 'bwrap' ? 'bwrap' : undefined;\n",
    ...files,
  };
  for (const [file, text] of Object.entries(tree)) {
    fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  try {
    await promisify(execFile)(process.execPath, [SCRIPT], { cwd: root });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe('check-sandbox-kinds', () => {
  test('passes callers that ask the port', async () => {
    const result = await check({
      'src/app/loops.ts': 'if (sandbox.runsInJobs) start();\nif (mode.capabilities.perExecution) open();\n',
    });
    assert.deepEqual(result, { code: 0, stderr: '' });
  });

  for (const [form, line] of [
    ['a comparison with a name', "if (config.sandbox === 'kubernetes') start();"],
    ['a comparison the other way round', "if ('container' !== mode.kind) skip();"],
    ['a case on a name', "switch (kind) { case 'bwrap': break; }"],
    ["an instanceof of a backend's class", 'if (mode instanceof ContainerBackend) commit();'],
    ['the per-execution half by its presence', 'if (sandbox.executions) open();'],
  ]) {
    test(`fails the build on ${form} outside mode.ts`, async () => {
      const result = await check({ 'src/app/status.ts': `// the caller\n${line}\n` });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /only src\/execution\/sandbox\/mode\.ts knows the sandbox backends/);
      assert.ok(result.stderr.includes(`src/app/status.ts:2: `), result.stderr);
    });
  }

  test('a unit test beside the code may name the kinds', async () => {
    const result = await check({ 'src/app/status.test.ts': "assert.equal(status.kind === 'bwrap', true);\n" });
    assert.equal(result.code, 0, result.stderr);
  });

  test('fails when an allowed file no longer needs it', async () => {
    const result = await check({ 'src/config.ts': 'export const sandbox = raw;\n' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /allows files that no longer need it: src\/config\.ts/);
  });
});
