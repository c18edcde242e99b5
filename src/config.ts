import fs from 'node:fs';
import path from 'node:path';
import { egressSettings } from './config-egress.js';
import { loadOperatorConfig, type OperatorConfig, OperatorConfigError } from './config-file.js';
import { type KubernetesSettings, kubernetesSettings } from './config-kubernetes.js';
import { presentCredentials } from './models/index.js';
import type { ProxySettings } from './network/index.js';
import type { S3BlobOptions } from './platform/blobs/s3.js';
import { parseBytes } from './platform/bytes.js';
import { parseSecretKey, SECRET_KEY_BYTES } from './platform/crypto.js';
import { type AllowedHosts, parseAllowedHosts } from './platform/net/address-policy.js';
import { traceProtocol, tracingRequested } from './platform/tracing.js';

/** Every setting Hangar reads from its environment, parsed and validated once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Where executions' workspaces are made, one directory each; `<dataDir>/workspaces` unless set. */
  workspaceDir: string;
  /** HANGAR_WORKSPACE_DIR was given: a root server refuses to start when its run user cannot reach it. */
  workspaceDirExplicit: boolean;
  /** Where setup snapshots' files are kept: `<dataDir>/snapshots`, or beside relocated workspaces. */
  snapshotDir: string;
  /**
   * Set at start (placeWorkspaces), never from the environment: the run user of a root server could not reach the
   * configured workspaces (`from`, through `blocking`), so they and the snapshots are in Hangar's own directory.
   */
  workspacesRelocated?: { from: string; blocking: string };
  /** PostgreSQL connection string; absent means the embedded PGlite database in the data directory. */
  databaseUrl: string | undefined;
  publicUrl: string;
  /** HANGAR_PUBLIC_URL was given; otherwise the public URL follows the address the server listens on. */
  publicUrlExplicit: boolean;
  bootstrapApiKey: string | undefined;
  metadataFiltering: boolean;
  logLevel: string;
  /** `HANGAR_LOG_FORMAT`: `pretty` (readable lines) or `json` (one object a line); unset, pretty on a terminal. */
  logFormat: 'pretty' | 'json';
  /** Embedded mode only: PGlite never autovacuums, so Hangar runs VACUUM (ANALYZE) this often. */
  vacuumIntervalSeconds: number;
  /** How often the overview's pending changes are folded into its hourly totals (HANGAR_OVERVIEW_FOLD_SECONDS). */
  overviewFoldSeconds: number;
  bodyLimitBytes: number;
  dbPoolSize: number;
  /** PGlite's shared_buffers in MB (HANGAR_PGLITE_SHARED_BUFFERS_MB); undefined: the default. */
  pgliteSharedBuffersMb: number | undefined;
  /** Where skill repositories are fetched from: `${gitBaseUrl}/${owner}/${repo}`. */
  gitBaseUrl: string;
  /** The operator's GitHub App (HANGAR_GITHUB_APP_*); undefined when none is configured. */
  githubApp: GitHubAppConfig | undefined;
  /** GitHub's REST API (HANGAR_GITHUB_API_URL): https://api.github.com, or a GitHub Enterprise server's /api/v3. */
  githubApiUrl: string;
  /** A repository's skills are fetched again at most this often unless a caller asks for a refresh. */
  gitRefreshSeconds: number;
  /** Encrypts team secrets at rest; absent means the key file generated in the data directory. */
  secretKey: Buffer | undefined;
  /** Agent identities per team that may execute runs; the oldest ones up to this count are available. */
  planMaxAgents: number;
  /** `HANGAR_CONFIG`: the operator's YAML file (harnesses). */
  operator: OperatorConfig;
  /** The operator file's path as given (HANGAR_CONFIG), for the start summary and `hangar doctor`. */
  operatorFile: string | undefined;
  /** `bwrap`, `process`, `container`, or undefined to use bwrap when it works here. */
  sandbox: string | undefined;
  /** The container sandbox: its engine (DOCKER_HOST), default image and each run's limits. */
  container: ContainerSettings;
  /** `HANGAR_SANDBOX_READ_ONLY_PATHS`: paths under /tmp or /run a bwrap sandbox still shows, read-only. */
  sandboxReadOnlyPaths: string[];
  /** HANGAR_SANDBOX=kubernetes: a Job per execution (config-kubernetes.ts, docs/kubernetes.md). */
  kubernetes: KubernetesSettings;
  /**
   * `HANGAR_RUNNER_RUNTIME_CLASSES`: runtime classes a team's runner may name besides HANGAR_KUBERNETES_RUNTIME_CLASS
   * (comma-separated); none by default, so that no team can leave the operator's isolation (gVisor, Kata).
   */
  runnerRuntimeClasses: string[];
  /** Runs executing at once across all replicas, and per team. */
  maxConcurrentRuns: number;
  maxConcurrentRunsPerTeam: number;
  /** An engine renews its runs' leases; a run whose lease passes is taken back (its engine died). */
  runLeaseSeconds: number;
  /** Limit of each environment setup command. */
  setupTimeoutMinutes: number;
  /**
   * Setup commands get network (package installs); harnesses get it only when configured. Under bwrap either way
   * through the sandbox's own egress, never the host's loopback or private addresses.
   */
  setupNetwork: boolean;
  /** Hangar's egress proxy, for environments whose network is an allow list (HANGAR_EGRESS_*, config-egress.ts). */
  egress: ProxySettings;
  /** How long a setup snapshot may be used (HANGAR_SNAPSHOT_TTL, default 24 h); 0 turns snapshots off. */
  snapshotTtlSeconds: number;
  /** The bound on all setup snapshots of this data directory together; least recently used go first. */
  snapshotMaxBytes: number;
  /** The bound on the git object cache (the mirrors clones and skills read); least recently used go first. */
  gitCacheMaxBytes: number;
  /**
   * Who setup commands and harnesses run as on the host when the server is root (`HANGAR_RUN_USER`, 64000:64000
   * by default); undefined when the server is not root: runs then run as the server's own user.
   */
  runUser: { uid: number; gid: number } | undefined;
  /** Bytes of harness output kept per stream and execution. */
  maxOutputBytes: number;
  /** Largest FILE or SCREENSHOT artifact a harness may upload. */
  maxArtifactBytes: number;
  /** Blobs in an S3-compatible bucket (HANGAR_S3_BUCKET); unset means files under the data directory. */
  s3: S3BlobOptions | undefined;
  /** Self-hosted worker connections are pinged this often; one silent for twice as long is closed. */
  workerHeartbeatSeconds: number;
  /** Webhook deliveries accepted per sender (webhook and client address) and minute; above it, 429. */
  webhookRatePerMinute: number;
  /** Failed webhook authentications per sender and minute before every further delivery gets 429. */
  webhookAuthFailuresPerMinute: number;
  /** Failed API-key authentications per client address and minute, across replicas, before 429. */
  authFailuresPerMinute: number;
  /**
   * Fastify's `trustProxy`: whether (and which) reverse proxies' X-Forwarded-For is believed for the client address
   * that rate limits count by. false: the TCP peer is the client.
   */
  trustProxy: boolean | string[];
  /** Provider key variables (OPENAI_API_KEY, ...) that are set, with their values: the operator's model keys. */
  modelCredentials: Record<string, string>;
  /** `HANGAR_MCP_ALLOWED_HOSTS`: non-public hosts and ranges HTTP MCP servers may be at (none by default). */
  mcpAllowedHosts: AllowedHosts;
  /** Audit entries older than this many days are deleted (HANGAR_AUDIT_RETENTION_DAYS, default 365). */
  auditRetentionDays: number;
  /** Ended runs older than this many days are deleted (HANGAR_RUN_RETENTION_DAYS); undefined: kept forever. */
  runRetentionDays: number | undefined;
  /** The highest `config.max_cost_usd` a run may ask for (HANGAR_RUN_MAX_COST_USD); undefined: none. */
  runMaxCostUsd: number | undefined;
  /** The cap of runs that give no `config.max_cost_usd` (HANGAR_RUN_DEFAULT_MAX_COST_USD); undefined: none. */
  runDefaultMaxCostUsd: number | undefined;
  /** `HANGAR_METRICS_TOKEN`: /metrics is served on the API port to requests bearing it (and required on the metrics port). */
  metricsToken: string | undefined;
  /** `HANGAR_METRICS_PORT`: /metrics on a port of its own (at HOST), for a scraper inside the network; 0 picks one. */
  metricsPort: number | undefined;
  /** OpenTelemetry traces are exported: OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set (platform/tracing.ts). */
  tracing: boolean;
}

export class ConfigError extends Error {}

/** Whether traces are exported; an OTLP protocol Hangar cannot send is refused at start, not at the first span. */
function tracing(env: NodeJS.ProcessEnv): boolean {
  if (!tracingRequested(env)) return false;
  try {
    traceProtocol(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return true;
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function text(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** Seconds from a number of seconds or a number with a unit: `90s`, `30m`, `24h`, `7d`. */
function duration(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const match = /^(\d+)\s*(s|m|h|d)?$/i.exec(raw);
  if (!match) throw new ConfigError(`${name} must be a duration such as 3600, 90m, 24h or 7d, got "${raw}"`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[(match[2] ?? 's').toLowerCase() as 's' | 'm' | 'h' | 'd'];
  const seconds = Number(match[1]) * unit;
  if (seconds > 365 * 86_400) throw new ConfigError(`${name} must be at most a year, got "${raw}"`);
  return seconds;
}

/** Never echoes the value: it is a key. */
function secretKey(env: Env): Buffer | undefined {
  const raw = text(env, 'HANGAR_SECRET_KEY');
  if (raw === undefined) return undefined;
  const key = parseSecretKey(raw);
  if (!key) {
    throw new ConfigError(
      `HANGAR_SECRET_KEY must be ${SECRET_KEY_BYTES} random bytes written as 64 hex characters or as base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return key;
}

/** `HANGAR_TRUST_PROXY`: false (default), true (any peer), or a comma-separated list of proxy addresses/CIDRs. */
function trustProxy(env: Env): boolean | string[] {
  const raw = text(env, 'HANGAR_TRUST_PROXY');
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/.test(entry) && !['loopback', 'linklocal', 'uniquelocal'].includes(entry)) {
      throw new ConfigError(
        `HANGAR_TRUST_PROXY must be true, false or a comma-separated list of proxy addresses or CIDR ranges, got "${entry}"`,
      );
    }
  }
  return entries;
}

function url(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function operatorConfig(env: Env): OperatorConfig {
  try {
    return loadOperatorConfig(text(env, 'HANGAR_CONFIG'), env);
  } catch (error) {
    if (error instanceof OperatorConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

function s3Options(env: Env): S3BlobOptions | undefined {
  const bucket = text(env, 'HANGAR_S3_BUCKET');
  if (bucket === undefined) return undefined;
  const endpoint = text(env, 'HANGAR_S3_ENDPOINT');
  const accessKeyId = text(env, 'HANGAR_S3_ACCESS_KEY_ID');
  const secretAccessKey = text(env, 'HANGAR_S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      'HANGAR_S3_ACCESS_KEY_ID and HANGAR_S3_SECRET_ACCESS_KEY go together: set both, or neither for the AWS default chain',
    );
  }
  return {
    bucket,
    prefix: text(env, 'HANGAR_S3_PREFIX') ?? '',
    region: text(env, 'HANGAR_S3_REGION') ?? 'us-east-1',
    endpoint: endpoint === undefined ? undefined : url('HANGAR_S3_ENDPOINT', endpoint, ['http:', 'https:']),
    forcePathStyle: boolean(env, 'HANGAR_S3_FORCE_PATH_STYLE', endpoint !== undefined),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  };
}

function sandboxMode(env: Env): string | undefined {
  const raw = text(env, 'HANGAR_SANDBOX');
  if (raw !== undefined && raw !== 'bwrap' && raw !== 'process' && raw !== 'container' && raw !== 'kubernetes') {
    throw new ConfigError(`HANGAR_SANDBOX must be bwrap, process, container or kubernetes, got "${raw}"`);
  }
  return raw;
}

export interface ContainerSettings {
  /** `DOCKER_HOST`: the Docker Engine API (Docker or Podman's compatible service). */
  dockerHost: string;
  /** `HANGAR_DEFAULT_IMAGE`: the image of a run whose environment names none. */
  defaultImage: string;
  /** `HANGAR_RUN_MEMORY`, `HANGAR_RUN_CPUS`, `HANGAR_RUN_PIDS`: each run container's limits. */
  limits: { memoryBytes: number; cpus: number; pids: number };
  /**
   * `HANGAR_RUN_MEMORY_MAX`, `HANGAR_RUN_CPUS_MAX`, `HANGAR_RUN_PIDS_MAX`: the most an environment may ask for
   * (default: the limits themselves, so an environment may only ask for less).
   */
  maximums: { memoryBytes: number; cpus: number; pids: number };
}

function containerSettings(env: Env): ContainerSettings {
  const memory = (name: string, fallback: string) => {
    const raw = text(env, name) ?? fallback;
    const bytes = parseBytes(raw);
    if (bytes === undefined || bytes < 16 * 1024 * 1024)
      throw new ConfigError(`${name} must be a size of at least 16m (e.g. 2g, 512m), got "${raw}"`);
    return bytes;
  };
  const cpuCount = (name: string, fallback: string) => {
    const raw = text(env, name) ?? fallback;
    const cpus = Number(raw);
    if (!Number.isFinite(cpus) || cpus < 0.01 || cpus > 1024)
      throw new ConfigError(`${name} must be a number of CPUs between 0.01 and 1024 (e.g. 1.5), got "${raw}"`);
    return cpus;
  };
  const limits = {
    memoryBytes: memory('HANGAR_RUN_MEMORY', '2g'),
    cpus: cpuCount('HANGAR_RUN_CPUS', '1'),
    pids: integer(env, 'HANGAR_RUN_PIDS', 1024, 16, 1_000_000),
  };
  const maximums = {
    memoryBytes: memory('HANGAR_RUN_MEMORY_MAX', String(limits.memoryBytes)),
    cpus: cpuCount('HANGAR_RUN_CPUS_MAX', String(limits.cpus)),
    pids: integer(env, 'HANGAR_RUN_PIDS_MAX', limits.pids, 16, 1_000_000),
  };
  for (const [key, name] of [
    ['memoryBytes', 'HANGAR_RUN_MEMORY'],
    ['cpus', 'HANGAR_RUN_CPUS'],
    ['pids', 'HANGAR_RUN_PIDS'],
  ] as const)
    if (maximums[key] < limits[key]) throw new ConfigError(`${name}_MAX must not be below ${name}`);
  return {
    dockerHost: text(env, 'DOCKER_HOST') ?? 'unix:///var/run/docker.sock',
    defaultImage: text(env, 'HANGAR_DEFAULT_IMAGE') ?? 'debian:bookworm',
    limits,
    maximums,
  };
}

function logFormat(env: Env): 'pretty' | 'json' {
  const raw = text(env, 'HANGAR_LOG_FORMAT');
  if (raw === undefined) return process.stdout.isTTY ? 'pretty' : 'json';
  if (raw !== 'pretty' && raw !== 'json')
    throw new ConfigError(`HANGAR_LOG_FORMAT must be pretty or json, got "${raw}"`);
  return raw;
}

/** Colon-separated absolute paths, like PATH; each must exist (a typo would only show as a run failing later). */
function sandboxReadOnlyPaths(env: Env): string[] {
  const raw = text(env, 'HANGAR_SANDBOX_READ_ONLY_PATHS');
  if (raw === undefined) return [];
  const paths = raw.split(':').filter((entry) => entry !== '');
  for (const entry of paths) {
    if (!path.isAbsolute(entry) || !fs.existsSync(entry))
      throw new ConfigError(`HANGAR_SANDBOX_READ_ONLY_PATHS: "${entry}" is not an existing absolute path`);
  }
  return paths.map((entry) => fs.realpathSync(entry));
}

/** The default run user of a root server: an id no distribution hands out to a login or a system service. */
const DEFAULT_RUN_ID = 64000;

/** `HANGAR_RUN_USER`: uid, uid:gid or a user name from /etc/passwd; never root. Only a root server can switch users. */
function runUser(env: Env, serverUid: number | undefined): { uid: number; gid: number } | undefined {
  const raw = text(env, 'HANGAR_RUN_USER');
  if (serverUid !== 0) {
    if (raw !== undefined)
      throw new ConfigError(
        "HANGAR_RUN_USER needs the server to run as root; otherwise runs run as the server's own user",
      );
    return undefined;
  }
  if (raw === undefined) return { uid: DEFAULT_RUN_ID, gid: DEFAULT_RUN_ID };
  let user: { uid: number; gid: number } | undefined;
  const numeric = /^(\d+)(?::(\d+))?$/.exec(raw);
  if (numeric) user = { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) };
  else {
    const passwd = (() => {
      try {
        return fs.readFileSync('/etc/passwd', 'utf8');
      } catch {
        return '';
      }
    })();
    const entry = passwd
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => fields[0] === raw);
    if (!entry) throw new ConfigError(`HANGAR_RUN_USER: no user "${raw}" in /etc/passwd; give uid or uid:gid`);
    user = { uid: Number(entry[2]), gid: Number(entry[3]) };
  }
  if (user.uid === 0 || user.gid === 0)
    throw new ConfigError('HANGAR_RUN_USER must not be root (uid or gid 0): runs would keep root');
  if (user.uid > 2 ** 32 - 2 || user.gid > 2 ** 32 - 2)
    throw new ConfigError(`HANGAR_RUN_USER: "${raw}" is not a valid uid:gid`);
  return user;
}

/** The GitHub App Hangar acts as: its ID, its private key (PEM, read from a file) and its webhook secret. */
export interface GitHubAppConfig {
  appId: number;
  privateKey: string;
  /** Checks the signature of the App's deliveries (/webhooks/github-app); undefined: they are refused. */
  webhookSecret: string | undefined;
  /** The name a comment mentions to start a run (HANGAR_GITHUB_HANDLE, without the @; default `hangar`). */
  handle: string;
  /** An issue given this label starts a run (HANGAR_GITHUB_LABEL); undefined: labels start nothing. */
  label: string | undefined;
  /**
   * Deliveries that may start runs per repository and per GitHub user (the commenter, reviewer or labeller) in any
   * hour (HANGAR_GITHUB_RUNS_PER_HOUR_PER_REPOSITORY, default 30; HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER, default 10).
   */
  runsPerHourPerRepository: number;
  runsPerHourPerUser: number;
}

/** The settings that mean something only with an App: set without one, they would be ignored in silence. */
const GITHUB_APP_SETTINGS = [
  'HANGAR_GITHUB_WEBHOOK_SECRET',
  'HANGAR_GITHUB_HANDLE',
  'HANGAR_GITHUB_LABEL',
  'HANGAR_GITHUB_RUNS_PER_HOUR_PER_REPOSITORY',
  'HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER',
];

/** HANGAR_GITHUB_APP_ID with HANGAR_GITHUB_APP_PRIVATE_KEY_FILE (both or neither), HANGAR_GITHUB_WEBHOOK_SECRET. */
function githubApp(env: Env): GitHubAppConfig | undefined {
  const id = text(env, 'HANGAR_GITHUB_APP_ID');
  const keyFile = text(env, 'HANGAR_GITHUB_APP_PRIVATE_KEY_FILE');
  if (id === undefined && keyFile === undefined) {
    const orphan = GITHUB_APP_SETTINGS.find((name) => text(env, name) !== undefined);
    if (orphan)
      throw new ConfigError(
        `${orphan} is set but HANGAR_GITHUB_APP_ID is not: set HANGAR_GITHUB_APP_ID and HANGAR_GITHUB_APP_PRIVATE_KEY_FILE (the App it belongs to), or unset ${orphan}`,
      );
    return undefined;
  }
  if (id === undefined || keyFile === undefined)
    throw new ConfigError('HANGAR_GITHUB_APP_ID and HANGAR_GITHUB_APP_PRIVATE_KEY_FILE are set together');
  const appId = integer(env, 'HANGAR_GITHUB_APP_ID', 0, 1, Number.MAX_SAFE_INTEGER);
  let privateKey: string;
  try {
    privateKey = fs.readFileSync(keyFile, 'utf8');
  } catch (error) {
    throw new ConfigError(`HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: ${keyFile} cannot be read: ${(error as Error).message}`);
  }
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(privateKey))
    throw new ConfigError(`HANGAR_GITHUB_APP_PRIVATE_KEY_FILE: ${keyFile} is not a PEM private key`);
  const webhookSecret = text(env, 'HANGAR_GITHUB_WEBHOOK_SECRET');
  if (webhookSecret !== undefined && webhookSecret.length < 16)
    throw new ConfigError('HANGAR_GITHUB_WEBHOOK_SECRET must be at least 16 characters');
  const handle = (text(env, 'HANGAR_GITHUB_HANDLE') ?? 'hangar').replace(/^@/, '');
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/.test(handle))
    throw new ConfigError('HANGAR_GITHUB_HANDLE must be a GitHub login (letters, digits, hyphens)');
  return {
    appId,
    privateKey,
    webhookSecret,
    handle,
    label: text(env, 'HANGAR_GITHUB_LABEL'),
    runsPerHourPerRepository: integer(env, 'HANGAR_GITHUB_RUNS_PER_HOUR_PER_REPOSITORY', 30, 1, 100_000),
    runsPerHourPerUser: integer(env, 'HANGAR_GITHUB_RUNS_PER_HOUR_PER_USER', 10, 1, 100_000),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const operator = operatorConfig(env);
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined) url('DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);
  const publicUrlRaw = text(env, 'HANGAR_PUBLIC_URL');
  const publicUrl = (
    publicUrlRaw === undefined
      ? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
      : url('HANGAR_PUBLIC_URL', publicUrlRaw, ['http:', 'https:'])
  ).replace(/\/+$/, '');
  const bootstrapApiKey = text(env, 'HANGAR_BOOTSTRAP_API_KEY');
  if (bootstrapApiKey !== undefined && !/^[\x21-\x7e]{16,200}$/.test(bootstrapApiKey)) {
    throw new ConfigError('HANGAR_BOOTSTRAP_API_KEY must be 16 to 200 printable characters without spaces');
  }
  const logLevel = text(env, 'HANGAR_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`HANGAR_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const maxConcurrentRuns = integer(env, 'HANGAR_MAX_CONCURRENT_RUNS', 8, 1, 100_000);
  const dataDir = path.resolve(text(env, 'HANGAR_DATA_DIR') ?? './.hangar');
  return {
    port,
    host,
    dataDir,
    workspaceDir: path.resolve(text(env, 'HANGAR_WORKSPACE_DIR') ?? path.join(dataDir, 'workspaces')),
    workspaceDirExplicit: text(env, 'HANGAR_WORKSPACE_DIR') !== undefined,
    snapshotDir: path.join(dataDir, 'snapshots'),
    databaseUrl,
    publicUrl,
    publicUrlExplicit: publicUrlRaw !== undefined,
    bootstrapApiKey,
    metadataFiltering: boolean(env, 'HANGAR_METADATA_FILTERING', true),
    logLevel,
    logFormat: logFormat(env),
    vacuumIntervalSeconds: integer(env, 'HANGAR_VACUUM_INTERVAL_SECONDS', 3600, 60, 7 * 24 * 3600),
    overviewFoldSeconds: integer(env, 'HANGAR_OVERVIEW_FOLD_SECONDS', 300, 1, 24 * 3600),
    bodyLimitBytes: integer(env, 'HANGAR_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    dbPoolSize: integer(env, 'HANGAR_DB_POOL_SIZE', 10, 1, 200),
    // Unset: the database layer's default (DEFAULT_PGLITE_SHARED_BUFFERS_MB in platform/db/pglite.ts, which the
    // CLI's config does not load).
    pgliteSharedBuffersMb:
      text(env, 'HANGAR_PGLITE_SHARED_BUFFERS_MB') === undefined
        ? undefined
        : integer(env, 'HANGAR_PGLITE_SHARED_BUFFERS_MB', 0, 1, 4096),
    gitBaseUrl: url('HANGAR_GIT_BASE_URL', text(env, 'HANGAR_GIT_BASE_URL') ?? 'https://github.com', [
      'https:',
      'http:',
      'ssh:',
      'file:',
    ]).replace(/\/+$/, ''),
    githubApp: githubApp(env),
    githubApiUrl: url('HANGAR_GITHUB_API_URL', text(env, 'HANGAR_GITHUB_API_URL') ?? 'https://api.github.com', [
      'https:',
      'http:',
    ]).replace(/\/+$/, ''),
    gitRefreshSeconds: integer(env, 'HANGAR_GIT_REFRESH_SECONDS', 300, 0, 7 * 24 * 3600),
    secretKey: secretKey(env),
    planMaxAgents: integer(env, 'HANGAR_PLAN_MAX_AGENTS', 25, 0, 1_000_000),
    operator,
    operatorFile: text(env, 'HANGAR_CONFIG'),
    modelCredentials: presentCredentials(operator.catalogue, env),
    sandbox: sandboxMode(env),
    container: containerSettings(env),
    sandboxReadOnlyPaths: sandboxReadOnlyPaths(env),
    kubernetes: kubernetesSettings(env, (message) => {
      throw new ConfigError(message);
    }),
    runnerRuntimeClasses: (text(env, 'HANGAR_RUNNER_RUNTIME_CLASSES') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
    maxConcurrentRuns,
    maxConcurrentRunsPerTeam: integer(env, 'HANGAR_MAX_CONCURRENT_RUNS_PER_TEAM', maxConcurrentRuns, 1, 100_000),
    runLeaseSeconds: integer(env, 'HANGAR_RUN_LEASE_SECONDS', 30, 2, 3600),
    setupTimeoutMinutes: integer(env, 'HANGAR_SETUP_TIMEOUT_MINUTES', 15, 1, 24 * 60),
    setupNetwork: boolean(env, 'HANGAR_SETUP_NETWORK', true),
    egress: egressSettings(env, (message) => {
      throw new ConfigError(message);
    }),
    snapshotTtlSeconds: duration(env, 'HANGAR_SNAPSHOT_TTL', 24 * 3600),
    snapshotMaxBytes: integer(env, 'HANGAR_SNAPSHOT_MAX_MB', 20 * 1024, 1, 1024 * 1024 * 1024) * 1024 * 1024,
    gitCacheMaxBytes: integer(env, 'HANGAR_GIT_CACHE_MAX_MB', 10 * 1024, 1, 1024 * 1024 * 1024) * 1024 * 1024,
    runUser: runUser(env, process.getuid?.()),
    maxOutputBytes: integer(env, 'HANGAR_MAX_OUTPUT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxArtifactBytes: integer(env, 'HANGAR_MAX_ARTIFACT_BYTES', 50 * 1024 * 1024, 1024, 10 * 1024 * 1024 * 1024),
    s3: s3Options(env),
    workerHeartbeatSeconds: integer(env, 'HANGAR_WORKER_HEARTBEAT_SECONDS', 30, 1, 3600),
    webhookRatePerMinute: integer(env, 'HANGAR_WEBHOOK_RATE_PER_MINUTE', 60, 1, 1_000_000),
    webhookAuthFailuresPerMinute: integer(env, 'HANGAR_WEBHOOK_AUTH_FAILURES_PER_MINUTE', 10, 1, 1_000_000),
    authFailuresPerMinute: integer(env, 'HANGAR_AUTH_FAILURES_PER_MINUTE', 30, 1, 1_000_000),
    trustProxy: trustProxy(env),
    mcpAllowedHosts: allowedHosts(env, 'HANGAR_MCP_ALLOWED_HOSTS'),
    auditRetentionDays: integer(env, 'HANGAR_AUDIT_RETENTION_DAYS', 365, 1, 100 * 365),
    runRetentionDays:
      text(env, 'HANGAR_RUN_RETENTION_DAYS') === undefined
        ? undefined
        : integer(env, 'HANGAR_RUN_RETENTION_DAYS', 0, 1, 100 * 365),
    ...costCaps(env),
    metricsToken: metricsToken(env),
    tracing: tracing(env),
    metricsPort:
      text(env, 'HANGAR_METRICS_PORT') === undefined ? undefined : integer(env, 'HANGAR_METRICS_PORT', 0, 0, 65535),
  };
}

function metricsToken(env: Env): string | undefined {
  const token = text(env, 'HANGAR_METRICS_TOKEN');
  if (token !== undefined && !/^[\x21-\x7e]{16,200}$/.test(token))
    throw new ConfigError('HANGAR_METRICS_TOKEN must be 16 to 200 printable characters without spaces');
  return token;
}

function allowedHosts(env: Env, name: string): AllowedHosts {
  try {
    return parseAllowedHosts(text(env, name) ?? '');
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

/** HANGAR_RUN_MAX_COST_USD and HANGAR_RUN_DEFAULT_MAX_COST_USD: positive amounts, the default within the maximum. */
function costCaps(env: Env): { runMaxCostUsd: number | undefined; runDefaultMaxCostUsd: number | undefined } {
  const amount = (name: string) => {
    const raw = text(env, name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigError(`${name} must be a positive amount in USD, got "${raw}"`);
    return value;
  };
  const runMaxCostUsd = amount('HANGAR_RUN_MAX_COST_USD');
  const runDefaultMaxCostUsd = amount('HANGAR_RUN_DEFAULT_MAX_COST_USD') ?? runMaxCostUsd;
  if (runMaxCostUsd !== undefined && runDefaultMaxCostUsd! > runMaxCostUsd)
    throw new ConfigError('HANGAR_RUN_DEFAULT_MAX_COST_USD must not be above HANGAR_RUN_MAX_COST_USD');
  return { runMaxCostUsd, runDefaultMaxCostUsd };
}
