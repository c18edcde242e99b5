import type { EngineClient } from './engine-client.js';
import { runQuietly } from './exec.js';
import { type ContainerLimits, exceededMessage } from './limits.js';

/** The OOM kills and pids-limit refusals a container's cgroup has counted. */
export interface LimitCounters {
  oom: number;
  pids: number;
}

/**
 * Which limit the container's cgroup counters say was passed since `before` (the last look): the OOM killer's kills
 * (Podman 4.3 reports OOMKilled false for them) and the pids controller's refusals. cgroup v1 and v2 files.
 */
export async function limitPassed(
  client: EngineClient,
  containerId: string,
  before: LimitCounters,
  limits: ContainerLimits,
): Promise<{ exceeded: string | undefined; counters: LimitCounters }> {
  const text = await runQuietly(client, containerId, [
    '/bin/sh',
    '-c',
    'cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events 2>/dev/null',
  ]).catch(() => '');
  const count = (pattern: RegExp) => Math.max(0, ...[...text.matchAll(pattern)].map((match) => Number(match[1])));
  const counters = { oom: count(/^oom_kill (\d+)$/gm), pids: count(/^max (\d+)$/gm) };
  const exceeded =
    counters.oom > before.oom
      ? exceededMessage('memory', limits)
      : counters.pids > before.pids
        ? exceededMessage('pids', limits)
        : undefined;
  return { exceeded, counters };
}
