// Runs Hangar's TypeScript sources without a build: `node --import ./scripts/ts-loader.mjs file.ts`. The test suite,
// and every server, worker and CLI process a test starts, load through it.
//
// tsx does the job everywhere, but its hooks run on a thread of their own (module.register), and every module a
// process imports costs a round trip to that thread: a test server imports about 2,000, and loading it took about
// twice the CPU through tsx as the same modules built (bench/RESULTS.md, "Test suite"). Where Node has in-thread
// hooks (module.registerHooks: Node 22.15 and later, CI's Node 24), these hooks do tsx's job on the main thread:
// `./x.js` imports of a TypeScript source resolve to `./x.ts`, and `.ts` files are compiled by esbuild (what tsx
// compiles with) with the project's tsconfig, each compiled file kept in a cache keyed by its source. Elsewhere
// (Node 20) this registers tsx.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

if (typeof module.registerHooks !== 'function') {
  await import('tsx');
} else {
  registerInThread();
}

function registerInThread() {
  const { transformSync, version: esbuildVersion } = module.createRequire(import.meta.url)('esbuild');
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const tsconfig = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  const options = {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
  };
  // A compiled file depends on its source, these options and esbuild's version: all three are in its key.
  const optionsKey = JSON.stringify([esbuildVersion, options]);
  const cacheDirectory = path.join(root, 'node_modules', '.cache', 'hangar-ts');
  // Stack traces point into the TypeScript sources, as they do under tsx.
  process.setSourceMapsEnabled(true);

  const typescript = /\.m?ts$/;
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      // TypeScript's NodeNext imports name the compiled file (`./config.js`): here that is the source beside it.
      if (
        context.parentURL?.startsWith('file:') &&
        typescript.test(context.parentURL) &&
        (specifier.startsWith('./') || specifier.startsWith('../')) &&
        specifier.endsWith('.js')
      ) {
        const source = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
        if (fs.existsSync(source)) return { url: source.href, format: 'module', shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !typescript.test(url)) return nextLoad(url, context);
      const filename = fileURLToPath(url);
      const source = fs.readFileSync(filename, 'utf8');
      const key = createHash('sha256').update(optionsKey).update(filename).update(source).digest('hex');
      const cached = path.join(cacheDirectory, `${key}.mjs`);
      let code;
      try {
        code = fs.readFileSync(cached, 'utf8');
      } catch {
        code = transformSync(source, { ...options, sourcefile: filename }).code;
        keep(cached, code);
      }
      return { format: 'module', source: code, shortCircuit: true };
    },
  });

  /** Caches a compiled file; a process that cannot write there (a server started as another user) goes without. */
  function keep(cached, code) {
    // Written whole then renamed: two processes compiling the same file never read half of one.
    const partial = `${cached}.${process.pid}`;
    try {
      fs.mkdirSync(cacheDirectory, { recursive: true });
      fs.writeFileSync(partial, code);
      fs.renameSync(partial, cached);
    } catch {
      fs.rmSync(partial, { force: true });
    }
  }
}
