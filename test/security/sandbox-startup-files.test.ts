// A run's HOME is in its workspace, and the bash that launches each sandboxed process runs on the host, before the
// sandbox exists, with the run's environment and a socket as stdin (so bash reads ~/.bashrc as if sshd started it).
// The attack: a sandboxed process writes $HOME/.bashrc (or sets BASH_ENV, or exports a function) to run a command
// at the next launch, outside the sandbox. Performed for real on bwrap and process mode.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { type SandboxMode, spawnSandboxed } from '../../src/execution/sandbox/backend.js';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-startup-files-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function run(mode: SandboxMode, workspace: string, command: string, env: Record<string, string> = {}) {
  const child = spawnSandboxed({
    mode,
    argv: ['sh', '-c', command],
    cwd: workspace,
    env: { PATH: '/usr/bin:/bin', HOME: path.join(workspace, '.home'), ...env },
    hiddenPaths: [],
    allowNetwork: false,
    timeoutMs: 60_000,
    maxOutputBytes: 100_000,
    keepStdinOpen: false,
  });
  return child.exited;
}

// The sandboxes a server resolves (as root, bwrap's run user is the server's own here: no HANGAR_RUN_USER).
const bwrap = resolveSandboxMode(undefined).mode;
const modes: Array<[string, SandboxMode, string | false]> = [
  ['bwrap', bwrap, bwrap.kind === 'bwrap' ? false : 'bwrap does not work on this machine'],
  ['process', resolveSandboxMode('process').mode, false],
];

for (const [name, mode, skip] of modes) {
  test(`${name}: what a run plants for bash's start-up runs nowhere outside its sandbox`, { skip }, async () => {
    const workspace = fs.mkdtempSync(path.join(scratch, `${name}-`));
    fs.mkdirSync(path.join(workspace, '.home'));
    // Where only the host side could write: bwrap's /tmp is the sandbox's own, and process mode is told no path.
    const escaped = path.join(scratch, `${name}-escaped`);
    const planted = path.join(workspace, 'planted.sh');
    // Written from inside: a .bashrc, a BASH_ENV file, and an exported function shadowing a command the launcher runs.
    const first = await run(
      mode,
      workspace,
      `printf 'touch %s-bashrc\\n' "$ESCAPED" > "$HOME/.bashrc"; printf 'touch %s-bash-env\\n' "$ESCAPED" > "${planted}"`,
      { ESCAPED: escaped },
    );
    assert.equal(first.code, 0);
    const second = await run(mode, workspace, 'true', {
      BASH_ENV: planted,
      'BASH_FUNC_[%%': `() { touch ${escaped}-function; }`,
    });
    assert.equal(second.code, 0);
    for (const way of ['bashrc', 'bash-env', 'function'])
      assert.equal(fs.existsSync(`${escaped}-${way}`), false, `the launcher ran the run's ${way}`);
  });
}
