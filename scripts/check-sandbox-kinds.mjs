// Fails when code outside src/execution/sandbox/mode.ts checks which sandbox backend it has: a comparison with a
// backend's name (`.kind === 'bwrap'`, `config.sandbox !== 'container'`, `case 'process':`), an `instanceof` of a
// backend's class, or a reach for the per-execution half through `sandbox.executions` (its presence said "a
// container"). Callers ask the port instead (src/execution/sandbox/backend.ts: capabilities and methods). Import
// analysis cannot see a comparison, so this reads the text; the imports are dependency-cruiser's
// (.dependency-cruiser.cjs, sandbox-backends-from-mode and sandbox-implementations-behind-the-port).
import fs from 'node:fs';
import path from 'node:path';

const OWNER = 'src/execution/sandbox/mode.ts';

/**
 * Files (or folders, ending in /) that may still do so, each with its reason. A permanent entry no longer needed
 * fails; a temporary one is said, so that whoever finishes the switch takes it out.
 */
const ALLOWED = [
  // HANGAR_SANDBOX is validated with every setting at start (a bad value stops the process, exit code 2); the list
  // of names is the setting's, mode.ts turns the name into a backend.
  { path: 'src/config.ts', reason: 'validates the HANGAR_SANDBOX setting' },
];
const allowedFor = (file) =>
  ALLOWED.find((entry) => (entry.path.endsWith('/') ? file.startsWith(entry.path) : file === entry.path));

const KINDS = '(bwrap|process|container|kubernetes)';
const CHECKS = [
  { what: 'a comparison with a backend name', pattern: new RegExp(`[!=]==?\\s*['"\`]${KINDS}['"\`]`, 'g') },
  { what: 'a comparison with a backend name', pattern: new RegExp(`['"\`]${KINDS}['"\`]\\s*[!=]==?`, 'g') },
  { what: 'a case on a backend name', pattern: new RegExp(`\\bcase\\s+['"\`]${KINDS}['"\`]\\s*:`, 'g') },
  { what: "an instanceof of a backend's class", pattern: /\binstanceof\s+(Bwrap|Process|Container|Kubernetes)\w*/g },
  { what: 'the per-execution half by its presence', pattern: /\b(sandbox|mode)\??\.executions\b/g },
];

function sources(directory) {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const found = [];
const needed = new Set();
for (const file of sources('src')) {
  if (file === OWNER) continue;
  const text = fs.readFileSync(file, 'utf8');
  for (const { what, pattern } of CHECKS) {
    for (const match of text.matchAll(pattern)) {
      const allowed = allowedFor(file);
      if (allowed) {
        needed.add(allowed);
        continue;
      }
      const line = text.slice(0, match.index).split('\n').length;
      found.push(`${file}:${line}: ${what}: ${text.split('\n')[line - 1].trim()}`);
    }
  }
}
const stale = ALLOWED.filter((entry) => !entry.temporary && !needed.has(entry)).map((entry) => entry.path);
for (const entry of ALLOWED.filter((entry) => entry.temporary && needed.has(entry)))
  process.stdout.write(`check-sandbox-kinds: temporary exception ${entry.path} (${entry.reason})\n`);
if (found.length > 0) {
  process.stderr.write(
    `only ${OWNER} knows the sandbox backends; ask the port (src/execution/sandbox/backend.ts) instead:\n${found.join('\n')}\n`,
  );
}
if (stale.length > 0)
  process.stderr.write(`scripts/check-sandbox-kinds.mjs allows files that no longer need it: ${stale.join(', ')}\n`);
if (found.length > 0 || stale.length > 0) process.exit(1);
