import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type TestEngine, testImage } from './container-engines.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A stand-in for Hangar's image as the Kubernetes backend's init container uses it (HANGAR_KUBERNETES_RUNTIME_IMAGE):
 * `/app/dist` (this checkout's sources, compiled file by file with esbuild, as the build's tsc would emit them),
 * `/app/node_modules` (of the production dependencies, `npm ci --omit=dev` once per lock file, those the run pod's
 * worker can load, with their list in `/app/pod-runtime.txt`) and Node on PATH. Tagged
 * by a digest of the sources and the lock file, so a changed source makes a new image and an unchanged one is reused.
 */
export async function kubernetesRuntimeImage(engine: TestEngine): Promise<string> {
  const lock = fs.readFileSync(path.join(ROOT, 'package-lock.json'));
  const lockHash = createHash('sha256').update(lock).digest('hex').slice(0, 12);
  const cache = path.join(os.tmpdir(), `hangar-kubernetes-runtime-${lockHash}`);
  const modules = path.join(cache, 'node_modules');
  if (!fs.existsSync(path.join(cache, 'complete'))) {
    fs.mkdirSync(cache, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(cache, 'package.json'));
    fs.copyFileSync(path.join(ROOT, 'package-lock.json'), path.join(cache, 'package-lock.json'));
    execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: cache,
      stdio: 'ignore',
    });
    fs.writeFileSync(path.join(cache, 'complete'), '');
  }
  const sources = listSources(path.join(ROOT, 'src'));
  const digest = createHash('sha256').update(lockHash);
  for (const file of sources) digest.update(file).update(fs.readFileSync(file));
  const sourceHash = digest.digest('hex').slice(0, 16);
  const dist = path.join(os.tmpdir(), `hangar-kubernetes-dist-${sourceHash}`);
  if (!fs.existsSync(path.join(dist, 'main.js'))) {
    await build({
      entryPoints: sources,
      outdir: dist,
      outbase: path.join(ROOT, 'src'),
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
    });
    fs.writeFileSync(path.join(dist, 'package.json'), JSON.stringify({ type: 'module' }));
  }
  // What the init container copies of node_modules (scripts/pod-runtime.mjs, as the image's build makes it): the image
  // holds only those, so a package the list misses fails the end-to-end tests.
  const list = path.join(dist, '..', `hangar-kubernetes-pod-runtime-${sourceHash}.txt`);
  if (!fs.existsSync(list))
    fs.writeFileSync(
      `${list}.tmp`,
      execFileSync(process.execPath, [path.join(ROOT, 'scripts/pod-runtime.mjs'), dist, modules], { encoding: 'utf8' }),
    );
  if (!fs.existsSync(list)) fs.renameSync(`${list}.tmp`, list);
  // The digest is a no-op command, not a comment: the steps are joined into one line, and a `#` first would make
  // all of them a comment (an image with nothing in it, whose runtime copy then fails).
  const recipe = [
    `: sources ${sourceHash}`,
    'mkdir -p /app/dist',
    'cp -R /in/dist/. /app/dist/',
    'cp /in/pod-runtime.txt /app/pod-runtime.txt',
    'cd /in && xargs cp -R --parents -t /app < /in/pod-runtime.txt',
    'cp /in/node /usr/local/bin/node',
  ].join(' && ');
  return testImage(engine, recipe, [
    `${dist}:/in/dist:ro`,
    `${modules}:/in/node_modules:ro`,
    `${path.join(ROOT, 'package.json')}:/in/package.json:ro`,
    `${list}:/in/pod-runtime.txt:ro`,
    `${fs.realpathSync(process.execPath)}:/in/node:ro`,
  ]);
}

function listSources(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return listSources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}
