// Fails when slices depend on each other in a cycle (src/<slice>/ as one node, platform/ as one, every file at
// src/ itself on its own). dependency-cruiser finds module cycles; a cycle between slices can pass through modules
// that form none, so the module graph from `depcruise --output-type json` is collapsed to slices here.
import { execFileSync } from 'node:child_process';

const output = execFileSync(
  'node_modules/.bin/depcruise',
  [
    'src',
    '--output-type',
    'json',
    '--cache',
    'node_modules/.cache/dependency-cruiser/slices',
    '--cache-strategy',
    'content',
  ],
  {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  },
);
const { modules } = JSON.parse(output);

const nodeOf = (file) => {
  const match = /^src\/([^/]+)\//.exec(file);
  return match ? match[1] : file;
};

const edges = new Map();
for (const module of modules) {
  if (!module.source.startsWith('src/') || module.source.endsWith('.test.ts')) continue;
  const from = nodeOf(module.source);
  for (const dependency of module.dependencies) {
    if (!dependency.resolved.startsWith('src/')) continue;
    const to = nodeOf(dependency.resolved);
    // src/database.ts only composes the slices' table types into DB, the type every store's Kysely takes.
    if (to === from || to === 'src/database.ts') continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${module.source} -> ${dependency.resolved}`);
  }
}

// Tarjan's strongly connected components: every component of more than one node is a cycle.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let counter = 0;
function visit(node) {
  index.set(node, counter);
  low.set(node, counter);
  counter++;
  stack.push(node);
  onStack.add(node);
  for (const next of edges.get(node)?.keys() ?? []) {
    if (!index.has(next)) {
      visit(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) {
      low.set(node, Math.min(low.get(node), index.get(next)));
    }
  }
  if (low.get(node) === index.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component);
  }
}
for (const node of edges.keys()) if (!index.has(node)) visit(node);

if (components.length === 0) {
  process.stdout.write('slice cycles: none\n');
} else {
  for (const component of components) {
    process.stderr.write(`slice cycle between ${component.sort().join(', ')}; its imports:\n`);
    for (const from of component) {
      for (const [to, example] of edges.get(from) ?? []) {
        if (component.includes(to)) process.stderr.write(`  ${from} -> ${to}: ${example}\n`);
      }
    }
  }
  process.exit(1);
}
