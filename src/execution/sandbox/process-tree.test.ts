import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProcessOutput } from './process-output.js';
import { ProcessTree } from './process-tree.js';

type Name = 'SIGTERM' | 'SIGKILL';

/** A tree whose signals are recorded; `next(name)` resolves when that signal is sent. */
function recordedTree(timeoutMs = Number.POSITIVE_INFINITY) {
  const sent: Name[] = [];
  const waiting: Array<{ name: Name; resolve: () => void }> = [];
  const output = new ProcessOutput(1024);
  const tree = new ProcessTree(
    output,
    (name) => {
      sent.push(name);
      for (const waiter of waiting.filter((entry) => entry.name === name)) waiter.resolve();
    },
    timeoutMs,
  );
  const next = (name: Name) =>
    sent.includes(name) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ name, resolve }));
  return { tree, sent, next, output };
}

describe('ProcessTree', () => {
  test('a kill sends the graceful signal at once and the final one after the grace; the exit says killed', async () => {
    const { tree, sent, next } = recordedTree();
    tree.running();
    assert.equal(tree.state, 'running');
    const exited = tree.kill(0);
    assert.equal(tree.state, 'terminating');
    assert.deepEqual(sent, ['SIGTERM']);
    await next('SIGKILL');
    assert.deepEqual(sent, ['SIGTERM', 'SIGKILL']);
    tree.settle({ code: null, signal: 'SIGKILL' });
    assert.equal(tree.state, 'gone');
    assert.deepEqual(await exited, {
      code: null,
      signal: 'SIGKILL',
      timedOut: false,
      killed: true,
      outputTruncated: false,
    });
  });

  test('a kill while starting waits for the process: nothing is signalled before running()', async () => {
    const { tree, sent, next } = recordedTree();
    void tree.kill(60_000);
    assert.equal(tree.state, 'terminating');
    // Whatever was queued has had its turn: still nothing to signal.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, []);
    tree.running();
    await next('SIGTERM');
    assert.equal(tree.state, 'terminating', 'running() does not undo a termination asked for while starting');
    tree.settle({ code: 143, signal: null });
    assert.deepEqual(sent, ['SIGTERM'], 'gone before its grace passed: no final signal');
  });

  test('a tree that ends while starting is never signalled', async () => {
    const { tree, sent } = recordedTree();
    void tree.kill(0);
    tree.settle({ code: 126, signal: null });
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, []);
  });

  test('the wall-clock limit terminates the tree and says timedOut, not killed, even when a kill follows', async () => {
    const { tree, sent, next } = recordedTree(0);
    tree.running();
    await next('SIGTERM');
    const exited = tree.kill(0);
    assert.deepEqual(sent, ['SIGTERM'], 'a kill while terminating sends nothing more at once');
    tree.settle(tree.classify(143));
    const exit = await exited;
    assert.equal(exit.timedOut, true);
    assert.equal(exit.killed, false);
    assert.equal(exit.signal, 'SIGTERM');
    assert.equal(exit.code, null);
  });

  test('once gone, a kill sends nothing and leaves the exit as it was', async () => {
    const { tree, sent } = recordedTree();
    tree.running();
    tree.settle({ code: 0, signal: null });
    const exit = await tree.kill(0);
    assert.deepEqual(sent, []);
    assert.equal(exit.killed, false);
    assert.equal(exit.code, 0);
  });

  test('gone() stops every signal, before the exit is settled', async () => {
    const { tree, sent } = recordedTree();
    tree.running();
    void tree.kill(0);
    tree.gone();
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(sent, ['SIGTERM'], 'the final signal was cancelled with its timer');
    assert.equal(tree.ending, true);
  });

  test("a shell's 137 and 143 are signals only when the tree was sent them", () => {
    const { tree } = recordedTree();
    tree.running();
    assert.deepEqual(tree.classify(137), { code: 137, signal: null });
    assert.deepEqual(tree.classify(143), { code: 143, signal: null });
    void tree.kill(60_000);
    assert.deepEqual(tree.classify(137), { code: null, signal: 'SIGKILL' });
    assert.deepEqual(tree.classify(143), { code: null, signal: 'SIGTERM' });
    assert.deepEqual(tree.classify(1), { code: 1, signal: null });
    tree.gone();
  });

  test('the exit settles once, with what the backend saw (a limit passed)', async () => {
    const { tree, output } = recordedTree();
    tree.running();
    tree.settle({ code: 2, signal: null, limitExceeded: 'exceeded its memory limit of 1 GiB' });
    tree.settle({ code: 0, signal: null });
    const exit = await output.exited;
    assert.equal(exit.code, 2);
    assert.equal(exit.limitExceeded, 'exceeded its memory limit of 1 GiB');
  });
});
