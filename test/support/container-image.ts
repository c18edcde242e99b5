/**
 * Hangar's OCI image (the Dockerfile) started with Podman against a PostgreSQL database of its own, for the image's
 * check (test/image/) and its benchmark (bench/image/). Podman runs rootful with the host's network, so the
 * container reaches the machine's PostgreSQL at 127.0.0.1 and its port is the host's.
 */
import { execFile, execFileSync } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The image to test: HANGAR_TEST_IMAGE, else the one scripts/image.sh builds (or finds cached). */
export function imageUnderTest(): string {
  const named = process.env.HANGAR_TEST_IMAGE;
  if (named) return named;
  return execFileSync('bash', ['scripts/image.sh'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** The server that holds the test databases: TEST_DATABASE_URL, else the machine's local PostgreSQL. */
function adminUrl(): string {
  return process.env.TEST_DATABASE_URL ?? process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

/** Creates the database `name` afresh (only ever one of the image check's own) and returns its URL. */
export async function freshDatabase(name: string): Promise<string> {
  if (!/^hangar_image_[a-z0-9_]+$/.test(name)) throw new Error(`not an image check database: ${name}`);
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(name: string): Promise<void> {
  if (!/^hangar_image_[a-z0-9_]+$/.test(name)) throw new Error(`not an image check database: ${name}`);
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** A port free on the host right now (the container shares the host's network). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ImageContainer {
  name: string;
  url: string;
  /** Milliseconds from `podman run` to the first 200 from /readyz. */
  readyAfterMs: number;
}

export interface StartOptions {
  image: string;
  name: string;
  databaseUrl: string;
  env?: Record<string, string>;
  /** Seconds `podman stop` waits after SIGTERM before it sends SIGKILL. */
  stopTimeoutSeconds?: number;
  /** More `podman run` options (mounts, security options). */
  podmanArgs?: string[];
}

/** Starts the image and resolves once /readyz answers 200; throws with the container's log if it exits first. */
export async function startImage(options: StartOptions): Promise<ImageContainer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { PORT: String(port), DATABASE_URL: options.databaseUrl, HANGAR_PUBLIC_URL: url, ...options.env };
  const started = performance.now();
  await podman(
    'run',
    '--detach',
    '--name',
    options.name,
    '--network',
    'host',
    '--stop-timeout',
    String(options.stopTimeoutSeconds ?? 30),
    ...(options.podmanArgs ?? []),
    ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
    options.image,
  );
  for (;;) {
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return { name: options.name, url, readyAfterMs: performance.now() - started };
    if ((await podman('inspect', '--format', '{{.State.Running}}', options.name)) !== 'true') {
      throw new Error(`the container exited before it was ready:\n${await containerLog(options.name)}`);
    }
    // A container's readiness: only asking tells.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function containerLog(name: string): Promise<string> {
  const { stdout, stderr } = await run('podman', ['logs', name], { maxBuffer: 64 * 1024 * 1024 }).catch(
    (error) => error,
  );
  return `${stdout ?? ''}${stderr ?? ''}`;
}

/** Removes the container and its anonymous /data volume, whatever state it is in. */
export async function removeContainer(name: string): Promise<void> {
  await run('podman', ['rm', '--force', '--volumes', '--time', '0', name]).catch(() => undefined);
}
