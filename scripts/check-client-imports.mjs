// Fails when the client verbs (`hangar run`, `hangar runs list`, `hangar --version`, ...) load the server: what
// src/main.ts reaches through static imports may use only the packages below. The server (`serve`), the worker and
// `doctor`'s local checks are loaded by dynamic import, inside the verb that needs them. Loading the whole server
// made every client verb spend about 1.5 s of CPU before it did anything (TypeBox alone: about 700 files).
import { execFileSync } from 'node:child_process';

const ENTRY = 'src/main.ts';
/** The packages a client verb may load: its command line, its output formats, and the runs' event stream. */
const CLIENT_PACKAGES = new Set(['commander', 'yaml', 'eventsource-parser']);

const output = execFileSync(
  'node_modules/.bin/depcruise',
  [
    ENTRY,
    '--output-type',
    'json',
    '--cache',
    'node_modules/.cache/dependency-cruiser/client',
    '--cache-strategy',
    'content',
  ],
  {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  },
);
const modules = new Map(JSON.parse(output).modules.map((module) => [module.source, module]));

/** The package a resolved npm dependency belongs to (`node_modules/@scope/name/...` -> `@scope/name`). */
function packageOf(resolved) {
  const parts = resolved.split('node_modules/').at(-1).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

// Breadth first from the entry, remembering how each module was reached, so a failure names the whole chain.
const reachedFrom = new Map([[ENTRY, undefined]]);
const queue = [ENTRY];
const refused = [];
while (queue.length > 0) {
  const source = queue.shift();
  for (const dependency of modules.get(source)?.dependencies ?? []) {
    const typeOnly = dependency.dependencyTypes.includes('type-only');
    if (dependency.dynamic || typeOnly || dependency.coreModule) continue;
    if (dependency.dependencyTypes.some((type) => type.startsWith('npm'))) {
      const name = packageOf(dependency.resolved);
      if (!CLIENT_PACKAGES.has(name)) refused.push({ name, source });
      continue;
    }
    if (!dependency.resolved.startsWith('src/') || reachedFrom.has(dependency.resolved)) continue;
    reachedFrom.set(dependency.resolved, source);
    queue.push(dependency.resolved);
  }
}

function chain(source) {
  const links = [];
  for (let at = source; at !== undefined; at = reachedFrom.get(at)) links.unshift(at);
  return links.join(' -> ');
}

if (refused.length > 0) {
  for (const { name, source } of refused) console.error(`the client verbs load ${name}: ${chain(source)}`);
  console.error(
    `check-client-imports: ${refused.length} import(s) of server packages from ${ENTRY}; import them where the verb that needs them runs (await import)`,
  );
  process.exit(1);
}
console.log(`check-client-imports: ${reachedFrom.size} modules reach only ${[...CLIENT_PACKAGES].join(', ')}`);
