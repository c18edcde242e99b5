#!/usr/bin/env node
// The production dependencies a Kubernetes run pod's one-shot worker (`hangar worker --execution`, docs/kubernetes.md)
// can load, so that the init container copies those rather than the whole of node_modules (338 MB, most of it the
// server's: the Kubernetes client, PGlite, the GitHub App, the S3 client).
//
//   node scripts/pod-runtime.mjs <dist> <node_modules> > pod-runtime.txt
//
// Prints one path a line, relative to the app directory: `node_modules/<package>` for each package, `package.json`.
// (dist/ is copied whole, without the dashboard's dist/web.) How the set is found, erring on the side of too much:
// - esbuild follows every static and dynamic import from dist/main.js, except the dynamic imports main.js itself
//   makes (`serve` loads the server that way; the worker verb is registered statically, and its own dynamic imports
//   are followed). The bare specifiers reached name the packages.
// - each of those packages brings its whole dependency closure from node_modules' lock (.package-lock.json:
//   dependencies, optional and peer dependencies that are installed), resolved as Node resolves them, so a package's
//   own run-time requires of its dependencies, which no static analysis sees, are covered.
// - packages loaded by createRequire with a literal name (pino-pretty, in src/platform/logger.ts) are found by
//   reading dist's text for `createRequire(import.meta.url)('<name>')`.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

const [distArgument, modulesArgument] = process.argv.slice(2);
if (!distArgument || !modulesArgument) {
  process.stderr.write('usage: node scripts/pod-runtime.mjs <dist> <node_modules>\n');
  process.exit(2);
}
const dist = path.resolve(distArgument);
const modules = path.resolve(modulesArgument);
const entry = path.join(dist, 'main.js');
const builtins = new Set(builtinModules);

const analyse = (entryPoints, follow) =>
  build({
    entryPoints,
    bundle: true,
    write: false,
    // Nothing is written; esbuild wants a directory for several entry points all the same.
    outdir: path.join(dist, '.pod-runtime'),
    metafile: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    packages: 'external',
    plugins: [
      {
        name: 'dynamic-imports',
        setup(setup) {
          setup.onResolve({ filter: /.*/ }, (args) =>
            args.kind === 'dynamic-import' && !follow(args.importer) ? { path: args.path, external: true } : undefined,
          );
        },
      },
    ],
  });
// What every verb loads at start (main.js's static graph), then what the worker verb loads from there on.
const start = await analyse([entry], () => false);
const workerCli = path.join(dist, 'workers', 'cli.js');
const loaded = Object.keys(start.metafile.inputs).map((file) => path.resolve(file));
if (!loaded.includes(workerCli)) {
  process.stderr.write(`pod-runtime: ${workerCli} is not imported by main.js: the worker verb moved\n`);
  process.exit(1);
}
const workerTargets = start.metafile.inputs[path.relative(process.cwd(), workerCli)].imports
  .filter((imported) => imported.kind === 'dynamic-import')
  .map((imported) => imported.path);
const worker = await analyse(
  workerTargets
    .filter((target) => target.startsWith('.'))
    .map((target) => path.resolve(path.dirname(workerCli), target)),
  () => true,
);
const inputs = { ...start.metafile.inputs, ...worker.metafile.inputs };

const roots = new Set();
const packageOf = (specifier) => {
  if (specifier.startsWith('node:') || builtins.has(specifier.split('/')[0])) return undefined;
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
};
for (const target of workerTargets) {
  const name = packageOf(target);
  if (name) roots.add(name);
}
for (const [file, input] of Object.entries(inputs)) {
  for (const imported of input.imports) {
    if (!imported.external) continue;
    // The modules left out (the other verbs' dynamic imports) are relative paths, not packages.
    const name = packageOf(imported.path);
    if (name) roots.add(name);
  }
  const text = fs.readFileSync(path.resolve(file), 'utf8');
  for (const match of text.matchAll(/createRequire\(import\.meta\.url\)\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const name = packageOf(match[1]);
    if (name) roots.add(name);
  }
}

const lock = JSON.parse(fs.readFileSync(path.join(modules, '.package-lock.json'), 'utf8')).packages;
/** `node_modules/a/node_modules/b`: where Node finds `name` from the package installed at `from`. */
function resolve(from, name) {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (lock[candidate]) return candidate;
    if (!base) return undefined;
    const at = base.lastIndexOf('/node_modules/');
    base = at < 0 ? '' : base.slice(0, at);
  }
}
const needed = new Set();
const queue = [];
for (const name of roots) {
  const found = resolve('', name);
  if (!found) {
    process.stderr.write(`pod-runtime: ${name} is imported but not installed in ${modules}\n`);
    process.exit(1);
  }
  queue.push(found);
}
while (queue.length > 0) {
  const key = queue.pop();
  if (needed.has(key)) continue;
  needed.add(key);
  const entryOf = lock[key];
  for (const name of Object.keys({
    ...entryOf.dependencies,
    ...entryOf.optionalDependencies,
    ...entryOf.peerDependencies,
  })) {
    const found = resolve(key, name);
    // An optional or peer dependency that is not installed (another platform's, or one nobody asked for).
    if (found && fs.existsSync(path.join(path.dirname(modules), found))) queue.push(found);
  }
}
// A nested package goes with its parent's directory: list only the outermost ones.
const outermost = [...needed]
  .filter((key) => ![...needed].some((other) => other !== key && key.startsWith(`${other}/`)))
  .sort();
process.stdout.write(`${['package.json', ...outermost].join('\n')}\n`);
