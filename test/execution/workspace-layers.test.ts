import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { resolveSandboxMode } from '../../src/execution/sandbox/mode.js';
import { Workspaces } from '../../src/execution/workspace/workspace.js';
import { GitObjectCache } from '../../src/platform/git/object-cache.js';

// Warm workspaces (issue 28) are overlays mounted on the host over a snapshot: writes never reach the snapshot, and
// every way a workspace goes (its execution's end, the sweep, an engine's start after a crash) unmounts it.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-layers-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));
const root = path.join(scratch, 'workspaces');
const skip = process.getuid?.() !== 0 ? 'mounting an overlay needs a root server' : false;

function workspaces(): Workspaces {
  // A fresh instance knows no mounts: as the engine that starts after one died.
  return new Workspaces({
    root,
    gitBaseUrl: 'file:///nonexistent',
    sandbox: resolveSandboxMode('process').mode,
    hiddenPaths: [],
    setupTimeoutMs: 60_000,
    setupNetwork: false,
    maxOutputBytes: 1 << 20,
    gitCache: GitObjectCache.shared(path.join(scratch, 'git-cache'), 1 << 30),
  });
}

function snapshot(name: string): string {
  const directory = path.join(scratch, name);
  fs.mkdirSync(path.join(directory, 'src'), { recursive: true });
  fs.writeFileSync(path.join(directory, 'src', 'kept.txt'), 'kept\n');
  fs.writeFileSync(path.join(directory, 'gone.txt'), 'gone\n');
  return directory;
}

const mounted = (directory: string) =>
  fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === directory);

test('a mounted workspace changes nothing below it, and its removal unmounts it', { skip }, async () => {
  const lower = snapshot('snapshot-a');
  const spaces = workspaces();
  const directory = await spaces.create('run-a', 1);
  await spaces.layers.mount(directory, lower);
  assert.ok(mounted(directory));
  assert.ok(spaces.layers.inUse(lower), 'a snapshot under a mount is in use');
  fs.appendFileSync(path.join(directory, 'src', 'kept.txt'), 'more\n');
  fs.rmSync(path.join(directory, 'gone.txt'));
  fs.writeFileSync(path.join(directory, 'new.txt'), 'new\n');
  assert.equal(fs.readFileSync(path.join(directory, 'src', 'kept.txt'), 'utf8'), 'kept\nmore\n');
  assert.equal(fs.readFileSync(path.join(lower, 'src', 'kept.txt'), 'utf8'), 'kept\n');
  assert.ok(fs.existsSync(path.join(lower, 'gone.txt')) && !fs.existsSync(path.join(lower, 'new.txt')));
  await spaces.remove(directory);
  assert.ok(!mounted(directory) && !fs.existsSync(directory));
  assert.ok(!spaces.layers.inUse(lower));
  assert.deepEqual(fs.readdirSync(path.join(root, '.layers')), []);
  assert.equal(fs.readFileSync(path.join(lower, 'src', 'kept.txt'), 'utf8'), 'kept\n');
});

test('the mounts of an engine that died go with its workspaces: at the next start, and in the sweep', {
  skip,
}, async () => {
  const lower = snapshot('snapshot-b');
  const dead = workspaces();
  const atStart = await dead.create('run-b', 1);
  await dead.layers.mount(atStart, lower);
  const swept = await dead.create('run-c', 2);
  await dead.layers.mount(swept, lower);
  // The sweep judges by the database's answer: neither execution is in use.
  await workspaces().sweep(async () => new Set(), new Set([path.basename(atStart)]));
  assert.ok(!mounted(swept) && !fs.existsSync(swept));
  assert.ok(mounted(atStart), 'a workspace the engine keeps stays mounted');
  await workspaces().removeAllExcept(new Set());
  assert.ok(!mounted(atStart) && !fs.existsSync(atStart));
  assert.deepEqual(fs.readdirSync(path.join(root, '.layers')), []);
  assert.equal(fs.readFileSync(path.join(lower, 'gone.txt'), 'utf8'), 'gone\n');
});
