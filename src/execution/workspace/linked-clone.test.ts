import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLONES_DIRECTORY, cloneLinked, removeOrphanClones } from './linked-clone.js';

// A root server's linked clones, on real git repositories and real file systems (the end-to-end attack on the
// mirror through a run's checkout is in test/environments/warm-start.test.ts).
const owner = { uid: 64000, gid: 64000 };
const isRoot = process.getuid?.() === 0;
let scratch: string;
let mirror: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', '-C', cwd, ...args], { stdio: 'ignore' });

/** Every file under a clone's `.git/objects`, relative to it. */
function objectFiles(clone: string): string[] {
  return fs
    .readdirSync(path.join(clone, '.git', 'objects'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(path.join(clone, '.git'), path.join(entry.parentPath, entry.name)));
}

function clone(root: string, workspace: string) {
  fs.mkdirSync(workspace, { recursive: true });
  return cloneLinked(mirror, workspace, 'app', 'https://example.invalid/acme/app', {
    root,
    owner,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
  });
}

before(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-linked-clone-'));
  const work = path.join(scratch, 'work');
  fs.mkdirSync(work);
  git(work, 'init', '-q', '--initial-branch=main');
  for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(work, `f${i}`), `${i}\n`);
  git(work, 'add', '.');
  git(work, 'commit', '-qm', 'one');
  mirror = path.join(scratch, 'mirror.git');
  execFileSync('git', ['init', '-q', '--bare', '--shared=0644', mirror]);
  git(mirror, 'fetch', '-q', '--', work, '+refs/heads/*:refs/heads/*');
  git(mirror, 'symbolic-ref', 'HEAD', 'refs/heads/main');
});
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('linked clones', { skip: !isRoot && 'only root clones with hard links' }, () => {
  test('the object files are the mirror’s, root’s and read-only; everything else is the run user’s; origin is the URL', async () => {
    const root = path.join(scratch, 'root-a');
    const cloned = await clone(root, path.join(root, 'run.1'));
    const objects = objectFiles(cloned);
    assert.ok(objects.length > 0);
    for (const name of objects) {
      const [inClone, inMirror] = [
        fs.lstatSync(path.join(cloned, '.git', name)),
        fs.lstatSync(path.join(mirror, name)),
      ];
      assert.equal(inClone.ino, inMirror.ino, name);
      assert.equal(inClone.uid, 0, name);
      assert.equal(inClone.mode & 0o777, 0o444, name);
    }
    for (const name of ['.', '.git', '.git/config', '.git/HEAD', '.git/objects', '.git/refs/heads'])
      assert.equal(fs.lstatSync(path.join(cloned, name)).uid, owner.uid, name);
    // Not checked out here: the caller does it as the run user.
    assert.deepEqual(fs.readdirSync(cloned), ['.git']);
    assert.match(
      fs.readFileSync(path.join(cloned, '.git', 'config'), 'utf8'),
      /url = https:\/\/example\.invalid\/acme\/app/,
    );
    // Its staging directory is gone, and the directory of staged clones with it (no other clone is in progress).
    assert.deepEqual(fs.readdirSync(root), ['run.1']);
  });

  test('a linked file the run user could write (writable by its group) is replaced by a copy; the mirror’s stays as it is', async () => {
    const [name] = objectFiles(path.join(scratch, 'root-a', 'run.1', 'app'));
    const shared = path.join(mirror, name!);
    fs.chmodSync(shared, 0o664);
    try {
      const root = path.join(scratch, 'root-b');
      const cloned = await clone(root, path.join(root, 'run.1'));
      const copy = fs.lstatSync(path.join(cloned, '.git', name!));
      assert.notEqual(copy.ino, fs.lstatSync(shared).ino);
      assert.equal(copy.nlink, 1);
      assert.equal(copy.uid, owner.uid);
      assert.deepEqual(fs.readFileSync(path.join(cloned, '.git', name!)), fs.readFileSync(shared));
      assert.equal(fs.lstatSync(shared).uid, 0);
      assert.equal(fs.lstatSync(shared).mode & 0o777, 0o664);
    } finally {
      fs.chmodSync(shared, 0o444);
    }
  });

  test('on another file system git copies instead of linking, and every file is the run user’s', async (t) => {
    const shm = '/dev/shm';
    if (!fs.existsSync(shm) || fs.statSync(shm).dev === fs.statSync(scratch).dev)
      return t.skip('no other file system at /dev/shm');
    const root = fs.mkdtempSync(path.join(shm, 'hangar-linked-clone-'));
    try {
      const cloned = await clone(root, path.join(root, 'run.1'));
      for (const name of objectFiles(cloned)) {
        const stat = fs.lstatSync(path.join(cloned, '.git', name));
        assert.equal(stat.nlink, 1, name);
        assert.equal(stat.uid, owner.uid, name);
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  test('a staging directory whose workspace is gone is removed; one whose workspace is there stays', async () => {
    const root = path.join(scratch, 'root-c');
    const clones = path.join(root, CLONES_DIRECTORY);
    fs.mkdirSync(path.join(root, 'live.1'), { recursive: true });
    for (const name of ['live.1.0123456789ab', 'dead.2.0123456789ab'])
      fs.mkdirSync(path.join(clones, name, 'app', '.git'), { recursive: true });
    await removeOrphanClones(root);
    assert.deepEqual(fs.readdirSync(clones), ['live.1.0123456789ab']);
  });
});
