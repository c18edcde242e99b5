import { formatBytes } from '../../../platform/bytes.js';

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
