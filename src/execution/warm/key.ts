import { createHash } from 'node:crypto';
import path from 'node:path';

/** What a setup snapshot's state depends on: a snapshot serves only an execution whose inputs are all the same. */
export interface SnapshotInputs {
  /** The image's digest under containers; 'host' under bwrap and the process sandbox (the host's own tools). */
  image: string;
  sandbox: string;
  /** Each repository (as the environment names it) and the commit it is cloned at. */
  commits: Record<string, string>;
  setupCommands: readonly string[];
  setupNetwork: boolean;
  /**
   * The environment's own network for setup (`network.setup`, as stored: off, open or an allow list), when it names
   * one: what setup could download depends on it. Absent keeps the keys of environments that name none as they were.
   */
  setupReach?: unknown;
  /**
   * Variables setup commands see, names and values, hashed into the key (never stored): none today, since setup
   * gets no secrets and no run variables; a future variable joins the key here.
   */
  variables: Record<string, string>;
}

export interface SnapshotKeys {
  /** Everything: the snapshot to start from without running anything. */
  key: string;
  /** Everything but the commits: a snapshot to bring up to date when only the repositories moved on. */
  baseKey: string;
}

const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

export function snapshotKeys(inputs: SnapshotInputs): SnapshotKeys {
  const base = {
    version: 1,
    image: inputs.image,
    sandbox: inputs.sandbox,
    repos: Object.keys(inputs.commits).sort(),
    setup: inputs.setupCommands,
    network: inputs.setupNetwork,
    ...(inputs.setupReach !== undefined ? { reach: inputs.setupReach } : {}),
    variables: Object.entries(inputs.variables).sort(([a], [b]) => a.localeCompare(b)),
  };
  const commits = Object.entries(inputs.commits).sort(([a], [b]) => a.localeCompare(b));
  return { baseKey: hash(base), key: hash({ base, commits }) };
}

/**
 * Files whose change means installed dependencies are stale: a change to one re-runs setup on an updated start
 * under `setup_on_update: when_lockfiles_change`.
 */
const LOCKFILES = new Set([
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'bun.lock',
  'Gemfile.lock',
  'poetry.lock',
  'Pipfile.lock',
  'uv.lock',
  'requirements.txt',
  'Cargo.lock',
  'go.sum',
  'composer.lock',
  'mix.lock',
  'pubspec.lock',
]);

export function touchesLockfile(paths: readonly string[]): boolean {
  return paths.some((file) => LOCKFILES.has(path.posix.basename(file)));
}
