// Fails when code in src/ imports node:child_process outside src/platform/spawn/, the one way Hangar starts a
// process (issue 54): through the spawner, a server's or worker's fork no longer copies its page tables on the event
// loop's thread. The exceptions below each say why; a new one needs a reason as good.
import fs from 'node:fs';
import path from 'node:path';

const OWNER = 'src/platform/spawn/';

const ALLOWED = {
  // Probes run once while the server starts, before it has grown; synchronous by design.
  'src/app/status.ts': 'doctor and start-up checks (spawnSync once at start)',
  'src/execution/sandbox/mode.ts': 'which sandbox works here, probed once at start (spawnSync)',
  // Started once, and bound to the server itself: the watchdog's pipe has the server as its only writer.
  'src/execution/sandbox/server-death.ts': "the watchdog, started once; setpriv's probe (execFileSync, once)",
  // A Node process of Hangar's with an IPC channel, forked once at start like the spawner itself.
  'src/network/proxy/supervisor.ts': 'the egress proxy, forked once at start (issue 51)',
};

function sources(directory) {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const found = sources('src').filter(
  (file) =>
    !file.startsWith(OWNER) &&
    !(file in ALLOWED) &&
    /from ['"](node:)?child_process['"]|import\(['"](node:)?child_process['"]\)/.test(fs.readFileSync(file, 'utf8')),
);
const stale = Object.keys(ALLOWED).filter(
  (file) => fs.existsSync(file) && !/(node:)?child_process/.test(fs.readFileSync(file, 'utf8')),
);
if (found.length > 0 || stale.length > 0) {
  for (const file of found) console.error(`${file}: starts processes with node:child_process; use src/platform/spawn`);
  for (const file of stale)
    console.error(`scripts/check-spawns.mjs: ${file} is allowed but no longer needs it; remove it`);
  process.exit(1);
}
console.log(`processes: started through src/platform/spawn, but by ${Object.keys(ALLOWED).length} allowed files`);
