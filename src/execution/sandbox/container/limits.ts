import { formatBytes, parseBytes } from '../../../platform/bytes.js';

/** What one run's container may use; the engine enforces each (see docs/sandbox-containers.md). */
export interface ContainerLimits {
  memoryBytes: number;
  /** CPUs as a fraction (NanoCpus / 1e9). */
  cpus: number;
  /** Processes and threads at once. */
  pids: number;
}

/** The timeline's account of the limits a run got. */
export function limitsPayload(limits: ContainerLimits): Record<string, unknown> {
  return {
    memory: formatBytes(limits.memoryBytes),
    memory_bytes: limits.memoryBytes,
    cpus: limits.cpus,
    pids: limits.pids,
  };
}

/** The limit a run passed, said so that its owner knows what to change. */
export function exceededMessage(limit: 'memory' | 'pids', limits: ContainerLimits): string {
  return limit === 'memory'
    ? `exceeded its memory limit of ${formatBytes(limits.memoryBytes)}`
    : `exceeded its process limit of ${limits.pids} processes`;
}

/** What an environment asks for (its `limits`), as stored. */
export interface LimitRequest {
  memory?: string;
  cpus?: number;
  pids?: number;
}

/**
 * A run's limits: the environment's request where it made one, else the operator's default. The API refuses requests
 * above its maximums when the environment is saved; a self-hosted worker whose own maximums are lower lowers the
 * request to them here, and says which it lowered.
 */
export function runLimits(
  defaults: ContainerLimits,
  maximums: ContainerLimits,
  request: LimitRequest | undefined,
): { limits: ContainerLimits; lowered: string[] } {
  const memory = request?.memory === undefined ? undefined : parseBytes(request.memory);
  const wanted: ContainerLimits = {
    memoryBytes: memory ?? defaults.memoryBytes,
    cpus: request?.cpus ?? defaults.cpus,
    pids: request?.pids ?? defaults.pids,
  };
  const lowered: string[] = [];
  const within = <K extends keyof ContainerLimits>(key: K, name: string): number => {
    if (wanted[key] <= maximums[key]) return wanted[key];
    lowered.push(name);
    return maximums[key];
  };
  return {
    limits: {
      memoryBytes: within('memoryBytes', 'memory'),
      cpus: within('cpus', 'cpus'),
      pids: within('pids', 'pids'),
    },
    lowered,
  };
}
