import path from 'node:path';

/** Every setting Hangar reads from its environment, parsed and validated once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL connection string; absent means the embedded PGlite database in the data directory. */
  databaseUrl: string | undefined;
  publicUrl: string;
  bootstrapApiKey: string | undefined;
  metadataFiltering: boolean;
  logLevel: string;
  /** Embedded mode only: PGlite never autovacuums, so Hangar runs VACUUM (ANALYZE) this often. */
  vacuumIntervalSeconds: number;
  bodyLimitBytes: number;
  dbPoolSize: number;
}

export class ConfigError extends Error {}

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

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined) url('DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);
  const publicUrlRaw = text(env, 'HANGAR_PUBLIC_URL');
  const publicUrl = (
    publicUrlRaw === undefined ? `http://${host.includes(':') ? `[${host}]` : host}:${port}` : url('HANGAR_PUBLIC_URL', publicUrlRaw, ['http:', 'https:'])
  ).replace(/\/+$/, '');
  const bootstrapApiKey = text(env, 'HANGAR_BOOTSTRAP_API_KEY');
  if (bootstrapApiKey !== undefined && !/^[\x21-\x7e]{16,200}$/.test(bootstrapApiKey)) {
    throw new ConfigError('HANGAR_BOOTSTRAP_API_KEY must be 16 to 200 printable characters without spaces');
  }
  const logLevel = text(env, 'HANGAR_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`HANGAR_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return {
    port,
    host,
    dataDir: path.resolve(text(env, 'HANGAR_DATA_DIR') ?? './.hangar'),
    databaseUrl,
    publicUrl,
    bootstrapApiKey,
    metadataFiltering: boolean(env, 'HANGAR_METADATA_FILTERING', true),
    logLevel,
    vacuumIntervalSeconds: integer(env, 'HANGAR_VACUUM_INTERVAL_SECONDS', 3600, 60, 7 * 24 * 3600),
    bodyLimitBytes: integer(env, 'HANGAR_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    dbPoolSize: integer(env, 'HANGAR_DB_POOL_SIZE', 10, 1, 200),
  };
}
