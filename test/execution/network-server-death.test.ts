import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { processTable } from '../../src/execution/sandbox/proc.js';
import { describeProcesses, eventually, harnessEnv, processesWith, SCRIPT_HARNESS, script } from '../support/engine.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase } from '../support/server.js';

const sandbox = resolveSandboxMode(undefined);
const skip =
  sandbox.mode.kind !== 'bwrap'
    ? 'bwrap does not work on this machine'
    : sandbox.warning?.includes('with network will fail')
      ? `networked sandboxes cannot run here: ${sandbox.warning}`
      : false;

/** The pasta processes serving the namespace one of `pids` runs in: pasta's last argument is the namespace's PID 1. */
async function pastasServing(pids: number[]): Promise<number[]> {
  const parents = new Map((await processTable())?.map((entry) => [entry.pid, entry.ppid]));
  const ancestors = new Set<number>();
  for (const pid of pids)
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent))
      ancestors.add(parent);
  return processesWith('hangar-pasta-').filter((pasta) => {
    try {
      const args = fs.readFileSync(`/proc/${pasta}/cmdline`, 'utf8').split('\0').filter(Boolean);
      return ancestors.has(Number(args.at(-1)));
    } catch {
      return false; // gone meanwhile
    }
  });
}

/**
 * A networked bwrap sandbox's egress is a pasta process the server starts, which runs in the background, in a session
 * of its own. A SIGKILLed server used to leave it behind for good (its sandbox died, the pasta stayed); now the
 * server's watchdog ends it with the server.
 */
test('a SIGKILLed server leaves no pasta of its networked sandboxes behind', { skip }, async (t) => {
  const database = await createTestDatabase();
  t.after(() => database.drop());
  const doomed = await spawnKeyedServer(
    database,
    harnessEnv({ networked: { command: [process.execPath, SCRIPT_HARNESS], network: true } }),
  );
  t.after(() => stopChild(doomed.child, 'SIGKILL'));
  const marker = `hangar-networked-${process.pid}-${Date.now()}`;
  const response = await doomed.hangar.request('POST', '/agent/runs', {
    body: { prompt: script({ sleepers: marker }, { sleep: 120_000 }), config: { harness: { type: 'networked' } } },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  let pastas: number[] = [];
  await eventually('the networked sandbox runs, with its pasta', async () => {
    pastas = await pastasServing(processesWith(marker));
    return pastas.length > 0;
  });
  t.after(() => {
    for (const pid of [...pastas, ...processesWith(marker)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already: what the test wants.
      }
    }
  });

  await stopChild(doomed.child, 'SIGKILL');
  await eventually('the sandbox died with its server', () => processesWith(marker).length === 0);
  await eventually('its pasta died with it', () => pastas.every((pid) => !fs.existsSync(`/proc/${pid}`))).catch(
    (error) => {
      throw new Error(`${error.message}; still running:\n${describeProcesses(pastas)}`);
    },
  );
});
