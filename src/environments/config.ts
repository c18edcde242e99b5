import { normalizeNetwork, storedNetwork } from '../network/index.js';
import { formatBytes, parseBytes } from '../platform/bytes.js';
import { environmentImageProblem } from '../platform/image-reference.js';
import { ownerProblem, repoKey, repoProblem } from './github.js';
import type { EnvironmentConfig, EnvironmentConfigBody, EnvironmentGitHub, EnvironmentLimits } from './schemas.js';

/** The operator's largest container limits an environment may ask for (HANGAR_RUN_*_MAX). */
export interface LimitMaximums {
  memoryBytes: number;
  cpus: number;
  pids: number;
}

/**
 * Checks what the schema cannot (GitHub names, duplicates, blank strings) and fills in the defaults, so that
 * every stored config has the same shape. Returns the config or the first problem found.
 */
export function normalizeConfig(
  body: EnvironmentConfigBody,
  maximums?: LimitMaximums,
): { config: EnvironmentConfig } | { problem: string } {
  const name = body.name.trim();
  if (name === '') return { problem: 'name must not be blank' };
  // By reference only: an image ID (or a prefix of one) names whatever the engine holds, another team's private
  // image or setup snapshot included (issue 47.2).
  const imageProblem = body.docker_image === undefined ? undefined : environmentImageProblem(body.docker_image);
  if (imageProblem) return { problem: `docker_image ${imageProblem}` };
  const repos = body.github_repos ?? [];
  const seen = new Set<string>();
  for (const [index, entry] of repos.entries()) {
    const problem = ownerProblem(entry.owner) ?? repoProblem(entry.repo);
    if (problem) return { problem: `github_repos[${index}]: ${problem}` };
    const key = repoKey(entry);
    if (seen.has(key)) return { problem: `github_repos[${index}]: ${entry.owner}/${entry.repo} is listed twice` };
    seen.add(key);
  }
  const commands = body.setup_commands ?? [];
  const blank = commands.findIndex((command) => command.trim() === '');
  if (blank >= 0) return { problem: `setup_commands[${blank}] must not be blank` };
  const limitsProblem = body.limits ? limitProblem(body.limits, maximums) : undefined;
  if (limitsProblem) return { problem: limitsProblem };
  const registrySecret = body.registry_secret_name?.trim();
  if (registrySecret === '') return { problem: 'registry_secret_name must not be blank' };
  const network = body.network === undefined ? undefined : normalizeNetwork(body.network);
  if (network && 'problem' in network) return { problem: network.problem };
  return {
    config: {
      name,
      description: body.description?.trim() ?? '',
      ...(body.docker_image !== undefined ? { docker_image: body.docker_image } : {}),
      github_repos: repos.map(({ owner, repo }) => ({ owner, repo })),
      setup_commands: commands,
      failure_session_retention_minutes: body.failure_session_retention_minutes ?? null,
      ...(body.setup_on_update !== undefined ? { setup_on_update: body.setup_on_update } : {}),
      ...(body.limits && Object.keys(body.limits).length > 0 ? { limits: { ...body.limits } } : {}),
      ...(registrySecret ? { registry_secret_name: registrySecret } : {}),
      ...(body.github?.pull_request ? { github: { pull_request: body.github.pull_request } } : {}),
      ...(network && Object.keys(network.network).length > 0 ? { network: network.network } : {}),
      ...(body.default_runner_uid?.trim() ? { default_runner_uid: body.default_runner_uid.trim() } : {}),
    },
  };
}

/**
 * Why a limits request cannot be kept: a memory that is not a size, or anything above the operator's maximum. Refused
 * rather than lowered, so that an environment (or a runner) never silently runs with less than its owner asked for.
 */
export function limitProblem(limits: EnvironmentLimits, maximums: LimitMaximums | undefined): string | undefined {
  const memory = limits.memory === undefined ? undefined : parseBytes(limits.memory);
  if (limits.memory !== undefined && (memory === undefined || memory < 16 * 1024 * 1024))
    return `limits.memory "${limits.memory}" is not a size of at least 16m (e.g. 512m, 4g)`;
  if (!maximums) return undefined;
  if (memory !== undefined && memory > maximums.memoryBytes)
    return `limits.memory ${limits.memory} is above this server's maximum of ${formatBytes(maximums.memoryBytes)} (HANGAR_RUN_MEMORY_MAX)`;
  if (limits.cpus !== undefined && limits.cpus > maximums.cpus)
    return `limits.cpus ${limits.cpus} is above this server's maximum of ${maximums.cpus} (HANGAR_RUN_CPUS_MAX)`;
  if (limits.pids !== undefined && limits.pids > maximums.pids)
    return `limits.pids ${limits.pids} is above this server's maximum of ${maximums.pids} (HANGAR_RUN_PIDS_MAX)`;
  return undefined;
}

/** A stored config in today's shape: rows written before a field existed (or by hand) get its default. */
export function storedConfig(raw: Record<string, unknown>): EnvironmentConfig {
  // Only names the API would accept: they become git URLs and cache paths.
  const repos = (Array.isArray(raw.github_repos) ? (raw.github_repos as Array<Record<string, unknown>>) : []).filter(
    (entry): entry is { owner: string; repo: string } =>
      typeof entry?.owner === 'string' &&
      typeof entry.repo === 'string' &&
      !ownerProblem(entry.owner) &&
      !repoProblem(entry.repo),
  );
  const retention = raw.failure_session_retention_minutes;
  return {
    name: typeof raw.name === 'string' ? raw.name : '',
    description: typeof raw.description === 'string' ? raw.description : '',
    ...(typeof raw.docker_image === 'string' ? { docker_image: raw.docker_image } : {}),
    github_repos: repos.map(({ owner, repo }) => ({ owner, repo })),
    setup_commands: Array.isArray(raw.setup_commands)
      ? raw.setup_commands.filter((command) => typeof command === 'string')
      : [],
    failure_session_retention_minutes: typeof retention === 'number' ? retention : null,
    ...(raw.setup_on_update === 'always' ||
    raw.setup_on_update === 'never' ||
    raw.setup_on_update === 'when_lockfiles_change'
      ? { setup_on_update: raw.setup_on_update }
      : {}),
    ...(storedLimits(raw.limits) ? { limits: storedLimits(raw.limits) } : {}),
    ...(typeof raw.registry_secret_name === 'string' ? { registry_secret_name: raw.registry_secret_name } : {}),
    ...(storedGitHub(raw.github) ? { github: storedGitHub(raw.github) } : {}),
    ...(storedNetwork(raw.network) ? { network: storedNetwork(raw.network) } : {}),
    ...(typeof raw.default_runner_uid === 'string' ? { default_runner_uid: raw.default_runner_uid } : {}),
  };
}

function storedGitHub(raw: unknown): EnvironmentGitHub | undefined {
  const mode = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).pull_request : undefined;
  return mode === 'open' || mode === 'draft' || mode === 'off' ? { pull_request: mode } : undefined;
}

function storedLimits(raw: unknown): EnvironmentLimits | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { memory, cpus, pids } = raw as Record<string, unknown>;
  const limits: EnvironmentLimits = {
    ...(typeof memory === 'string' ? { memory } : {}),
    ...(typeof cpus === 'number' ? { cpus } : {}),
    ...(typeof pids === 'number' ? { pids } : {}),
  };
  return Object.keys(limits).length > 0 ? limits : undefined;
}
