/**
 * The OCI image's size and cold start: time from `podman run` to the first 200 from /readyz, against a fresh
 * PostgreSQL database (migrations included) and against an already migrated one, beside the baseline of the same
 * server started from this checkout on the host (`node dist/main.js serve`, run `npm run build` first), measured in
 * the same run, alternating. Needs root's Podman and the machine's PostgreSQL (as the image's check does).
 *
 *   BENCH_IMAGE_ROUNDS   starts of each kind (default 5)
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  dropDatabase,
  freePort,
  freshDatabase,
  imageUnderTest,
  podman,
  removeContainer,
  startImage,
} from '../../test/support/container-image.js';

const ROUNDS = Number(process.env.BENCH_IMAGE_ROUNDS ?? 5);
const DATABASE = 'hangar_image_bench';
// One key for every start: the second start on a database must read what the first one wrote.
const SECRET_KEY = crypto.randomBytes(32).toString('base64');
const SANDBOX_OPTIONS = ['--security-opt', 'seccomp=unconfined', '--security-opt', 'systempaths=unconfined'];

async function containerStart(image: string, databaseUrl: string): Promise<number> {
  const name = `hangar-image-bench-${process.pid}`;
  await removeContainer(name);
  try {
    const started = await startImage({
      image,
      name,
      databaseUrl,
      podmanArgs: SANDBOX_OPTIONS,
      env: { HANGAR_SECRET_KEY: SECRET_KEY },
    });
    return started.readyAfterMs;
  } finally {
    await podman('stop', '--time', '30', name);
    await removeContainer(name);
  }
}

async function hostStart(databaseUrl: string): Promise<number> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-image-bench-'));
  const begun = performance.now();
  const child = spawn(process.execPath, ['dist/main.js', 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      HANGAR_DATA_DIR: dataDir,
      HANGAR_SECRET_KEY: SECRET_KEY,
    },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ready) return performance.now() - begun;
      if (child.exitCode !== null) throw new Error(`the host server exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const image = imageUnderTest();
const bytes = Number(await podman('image', 'inspect', '--format', '{{.Size}}', image));
const base = await podman(
  'image',
  'inspect',
  '--format',
  '{{index .Labels "org.opencontainers.image.base.name"}}',
  image,
);
const baseBytes = Number(await podman('image', 'inspect', '--format', '{{.Size}}', base).catch(() => 'NaN'));

const times = { containerFresh: [] as number[], hostFresh: [] as number[], containerMigrated: [] as number[] };
const hostMigrated: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Alternating which goes first, so that a burst of other work on the machine does not favour one side.
  const order = round % 2 === 0 ? (['container', 'host'] as const) : (['host', 'container'] as const);
  for (const side of order) {
    const url = await freshDatabase(DATABASE);
    if (side === 'container') {
      times.containerFresh.push(await containerStart(image, url));
      times.containerMigrated.push(await containerStart(image, url));
    } else {
      times.hostFresh.push(await hostStart(url));
      hostMigrated.push(await hostStart(url));
    }
  }
}
await dropDatabase(DATABASE);

const mb = (value: number) => `${Math.round(value / 1e6)} MB`;
process.stdout.write(
  [
    `image ${image}: ${mb(bytes)} (base ${base}: ${mb(baseBytes)}; Hangar's layers ${mb(bytes - baseBytes)})`,
    `cold start to /readyz, median of ${ROUNDS} (min-max):`,
    `  fresh database:    image ${seconds(median(times.containerFresh))} (${seconds(Math.min(...times.containerFresh))}-${seconds(Math.max(...times.containerFresh))}), host ${seconds(median(times.hostFresh))} (${seconds(Math.min(...times.hostFresh))}-${seconds(Math.max(...times.hostFresh))})`,
    `  migrated database: image ${seconds(median(times.containerMigrated))} (${seconds(Math.min(...times.containerMigrated))}-${seconds(Math.max(...times.containerMigrated))}), host ${seconds(median(hostMigrated))} (${seconds(Math.min(...hostMigrated))}-${seconds(Math.max(...hostMigrated))})`,
    `  node: image ${await podman('run', '--rm', '--entrypoint', 'node', image, '--version')}, host ${process.version}`,
    '',
  ].join('\n'),
);
