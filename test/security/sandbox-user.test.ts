import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  INHERITED_FD,
  probeResult,
  type RootServer,
  rootServerSkip,
  startProbeRun,
  startRootServer,
} from './root-server.js';

const skip = rootServerSkip();

/**
 * What a process says about itself: capabilities, no_new_privs and open descriptors, each line tagged. Not its uid: in
 * a networked sandbox it is uid 0 of a user namespace of its own; who it is on the host shows in the files it makes.
 */
const selfReport = (tag: string) =>
  `grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | sed 's/^/${tag} /'; ls /proc/self/fd | sed 's/^/${tag}-fd /'`;

/** Finds `name` in a workspace under `root`. */
function findFile(root: string, name: string): string | undefined {
  for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.name === name) return path.join((entry as fs.Dirent & { parentPath: string }).parentPath, entry.name);
  }
  return undefined;
}

describe('who a run runs as, when the server is root', { skip, timeout: 120_000 }, () => {
  let server: RootServer;
  before(async () => {
    // The harness reports on itself, leaves a file and waits until the test has looked at it (bounded by a timeout).
    const script = `${selfReport('harness')}; cat setup-report.txt; touch harness-made.txt; for i in $(seq 600); do [ -e go ] && break; sleep 0.1; done`;
    server = await startRootServer({ script, network: false });
  });
  after(() => server?.stop());

  test('setup commands and the harness run as the run user, no capability, no_new_privs, only fds 0-2; the root warning is logged', async () => {
    const runId = await startProbeRun(server, [`(${selfReport('setup')}) > setup-report.txt; touch setup-made.txt`]);
    const workspaces = path.join(server.dataDir, 'workspaces');
    let made: string | undefined;
    for (let tries = 0; tries < 600 && !made; tries++) {
      made = fs.existsSync(workspaces) ? findFile(workspaces, 'harness-made.txt') : undefined;
      // A file the harness writes as the run user: no event tells of it.
      if (!made) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(made, 'the harness never wrote harness-made.txt');
    // Who the files belong to on the host: inside a user namespace a process may call itself anything.
    const workspace = path.dirname(made);
    const owners = ['setup-made.txt', 'harness-made.txt'].map((name) => fs.statSync(path.join(workspace, name)).uid);
    fs.writeFileSync(path.join(workspace, 'go'), '');
    assert.deepEqual(owners, [64000, 64000]);

    const { run, lines } = await probeResult(server, runId);
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
    for (const tag of ['setup', 'harness']) {
      const status = Object.fromEntries(
        lines
          .filter((line) => line.startsWith(`${tag} `))
          .map((line) => line.slice(tag.length + 1).split(/:\s+/) as [string, string]),
      );
      assert.equal(status.CapEff, '0000000000000000', `${tag}: ${JSON.stringify(status)}`);
      assert.equal(status.NoNewPrivs, '1', tag);
      // 0-2 and ls's own handle on /proc/self/fd (3); the server's inherited fd 9 is not among them.
      const fds = lines.filter((line) => line.startsWith(`${tag}-fd `)).map((line) => line.split(' ')[1]);
      assert.deepEqual(fds, ['0', '1', '2', '3'], `${tag} fds (the server holds fd ${INHERITED_FD})`);
    }
    assert.match(server.log(), /the server runs as root/);
  });
});
