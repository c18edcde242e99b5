import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { GUEST_GIT_CLEANUP, GUEST_GLOBAL_CONFIG, guestGitEnvironment } from './git-config.js';

// The guest's git settings (issue 47.6) with real git, outside a sandbox: what the cleanup leaves of each file, and
// what the agent's git then reads. test/security/shared-environments.test.ts runs the attack under bwrap.
let root: string;
let home: string;
const git = (cwd: string, args: string[], env: Record<string, string> = { HOME: home }) =>
  execFileSync('git', args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8' });

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-guest-git-'));
  home = path.join(root, '.home');
  fs.mkdirSync(path.join(home, '.config', 'git'), { recursive: true });
  git(root, ['init', '-q', 'app']);
  // What a setup could write: in the XDG file, in ~/.gitconfig (and a file it includes), in the clone's own.
  git(root, ['config', '--file', path.join(home, '.config', 'git', 'config'), 'alias.st', '!echo planted']);
  git(root, ['config', '--global', 'user.name', 'Setup Person']);
  git(root, ['config', '--global', 'include.path', path.join(root, 'included')]);
  fs.writeFileSync(path.join(root, 'included'), '[core]\n\tfsmonitor = /planted/included\n');
  git(path.join(root, 'app'), ['config', 'credential.https://example.com.helper', '!planted']);
  git(path.join(root, 'app'), ['config', 'filter.My Filter.v2.clean', 'planted']);
  git(path.join(root, 'app'), ['config', 'diff.x.textconv', 'planted']);
  git(path.join(root, 'app'), ['config', 'extensions.worktreeConfig', 'true']);
  git(path.join(root, 'app'), ['config', '--worktree', 'core.fsmonitor', '/planted/worktree']);
  git(path.join(root, 'app'), ['config', 'url.https://mirror.example/.insteadOf', 'https://example.com/']);
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

test('the cleanup keeps what runs nothing and removes every command-running key, the includes and the worktree file too', () => {
  const env = { HOME: home, ...guestGitEnvironment({}, home) };
  const cleanup = spawnSync('sh', ['-c', GUEST_GIT_CLEANUP, 'sh', 'app', 'not-a-repo'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
  });
  assert.equal(cleanup.status, 0, cleanup.stderr);
  const seen = git(path.join(root, 'app'), ['config', '--show-scope', '--list'], env);
  assert.doesNotMatch(seen, /planted/);
  assert.match(seen, /^global\tuser\.name=Setup Person$/m);
  assert.match(seen, /^local\turl\.https:\/\/mirror\.example\/\.insteadof=https:\/\/example\.com\/$/m);
  assert.match(seen, /^command\tcore\.fsmonitor=false$/m);
  assert.ok(fs.existsSync(path.join(home, GUEST_GLOBAL_CONFIG)));
});

test("the overrides come first, the run's own GIT_CONFIG entries after them; an empty helper drops the ones read before", () => {
  const env = guestGitEnvironment(
    { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'credential.helper', GIT_CONFIG_VALUE_0: 'store', OTHER: 'kept' },
    '/w/.home',
  );
  const count = Number(env.GIT_CONFIG_COUNT);
  const entries = Array.from({ length: count }, (_, index) => [
    env[`GIT_CONFIG_KEY_${index}`],
    env[`GIT_CONFIG_VALUE_${index}`],
  ]);
  assert.deepEqual(entries.at(-1), ['credential.helper', 'store']);
  assert.ok(entries.findIndex(([key]) => key === 'credential.helper') < count - 1);
  assert.equal(env.GIT_CONFIG_GLOBAL, `/w/.home/${GUEST_GLOBAL_CONFIG}`);
  assert.equal(env.GIT_CONFIG_NOSYSTEM, '1');
  assert.equal(env.OTHER, 'kept');
  // A repository nobody cleaned: its URL-scoped helper and askpass do not run.
  const other = path.join(root, 'other');
  git(root, ['init', '-q', 'other']);
  git(other, ['config', 'credential.https://example.com.helper', '!f() { echo PLANTED-HELPER >&2; }; f']);
  git(other, ['config', 'core.askPass', '/bin/false']);
  const fill = spawnSync('git', ['credential', 'fill'], {
    cwd: other,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      GIT_TERMINAL_PROMPT: '0',
      ...guestGitEnvironment({}, home),
    },
    input: 'protocol=https\nhost=example.com\n\n',
    encoding: 'utf8',
  });
  assert.doesNotMatch(fill.stderr, /PLANTED-HELPER|askpass/);
});
