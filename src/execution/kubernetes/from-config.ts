import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { DB } from '../../database.js';
import type { Bus } from '../../platform/bus.js';
import type { CapacityLimits, RunLifecycle } from '../../runs/index.js';
import type { EnginePresence } from '../engine/presence.js';
import type { EnvironmentSetups } from '../run/ledger.js';
import { Cluster } from './cluster.js';
import type { ExecutionCredentials } from './credential.js';
import { KubernetesEngine } from './engine.js';
import type { PlannerOptions } from './planner.js';

/** The server's Kubernetes engine from its configuration (HANGAR_SANDBOX=kubernetes): what app/loops.ts builds. */
export function kubernetesEngineFor(
  config: Config,
  deps: {
    db: Kysely<DB>;
    lifecycle: RunLifecycle;
    bus: Bus;
    log: FastifyBaseLogger;
    limits: CapacityLimits;
    environments: EnvironmentSetups;
    readSecret: (teamUid: string, name: string) => Promise<string | null>;
    credentials: ExecutionCredentials;
    /** The server's public address, the pods' way back when HANGAR_KUBERNETES_SERVER_URL is unset. */
    publicUrl: () => string;
    presence: EnginePresence;
    soleEngine?: string;
  },
): KubernetesEngine {
  const settings = config.kubernetes;
  return new KubernetesEngine({
    db: deps.db,
    lifecycle: deps.lifecycle,
    bus: deps.bus,
    log: deps.log,
    limits: deps.limits,
    leaseSeconds: config.runLeaseSeconds,
    cluster: new Cluster(settings.namespace, settings.instance, settings.kubeconfig),
    planner: plannerOptions(config, deps),
    presence: deps.presence,
    ...(deps.soleEngine ? { soleEngine: deps.soleEngine } : {}),
    unschedulableSeconds: settings.unschedulableSeconds,
  });
}

/** What a run's Job is planned with, from a server's or a worker's configuration. */
export function plannerOptions(
  config: Config,
  deps: Pick<Parameters<typeof kubernetesEngineFor>[1], 'environments' | 'readSecret' | 'credentials' | 'publicUrl'>,
): Omit<PlannerOptions, 'owner'> {
  const { operator } = config;
  const harnesses = [...operator.harnesses.values(), ...Object.values(operator.builtIn)];
  return {
    settings: config.kubernetes,
    environments: deps.environments,
    readSecret: deps.readSecret,
    credentials: deps.credentials,
    serverUrl: () => config.kubernetes.serverUrl ?? deps.publicUrl().replace(/\/+$/, ''),
    defaultImage: config.container.defaultImage,
    defaults: config.container.limits,
    maximums: config.container.maximums,
    setupTimeoutMinutes: config.setupTimeoutMinutes,
    setupNetwork: config.setupNetwork,
    harnessTimeoutMinutes: Math.max(60, ...harnesses.map((harness) => harness.timeoutMinutes)),
    // The pod's built-in agents call their model provider themselves, with the operator's keys.
    harnessNetwork: harnesses.some((harness) => harness.network) || Object.keys(config.modelCredentials).length > 0,
    modelCredentials: config.modelCredentials,
    operatorFile: config.operatorFile,
  };
}
