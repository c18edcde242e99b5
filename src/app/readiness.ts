import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../database.js';
import { engineAlive, type Harness } from '../execution/index.js';
import type { ModelCatalogue } from '../models/index.js';
import type { QueueFacts } from '../runs/index.js';
import { workerConnected } from '../workers/index.js';

/**
 * Whether anything here could execute a run: a harness of the operator's (or the caller's), a catalogue model with
 * credentials for the built-in agent, or built-in harnesses the operator set up (teams may bring their own keys).
 * Without any, the engine does not start and runs wait in QUEUED for an operator to configure one.
 */
export function canExecute(config: Config, models: ModelCatalogue, extra: Harness[] | undefined): boolean {
  if (config.operator.harnesses.size > 0 || config.operator.builtInConfigured || (extra?.length ?? 0) > 0) return true;
  return models.models.some((model) => models.availability(model).usable);
}

/** What to set so that runs execute, in words (the start log, queue_reason, `hangar doctor`). */
export const NO_HARNESS_HINT =
  'Set a model key (ANTHROPIC_API_KEY, OPENAI_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY), or point HANGAR_CONFIG at an operator file with a harness (try HANGAR_CONFIG=examples/hangar.yaml), then restart the server.';

/** A memo of `read` for `ms`: the engine's liveness is asked on every create and list, and changes rarely. */
function memo(read: (db: Kysely<DB>) => Promise<boolean>, ms: number): (db: Kysely<DB>) => Promise<boolean> {
  let cached: { at: number; value: Promise<boolean> } | undefined;
  return (db) => {
    const now = Date.now();
    if (!cached || now - cached.at > ms) {
      const value = read(db);
      cached = { at: now, value };
      // A failed read is not kept.
      value.catch(() => (cached = undefined));
    }
    return cached.value;
  };
}

/**
 * What the runs slice needs to explain why a run waits. An engine counts as alive while its heartbeat (renewed
 * with its leases) is younger than two leases; workers while their connection is (three heartbeats, as the hub).
 */
export function queueFacts(config: Config, options: { role: 'api' | 'engine' | 'all'; executes: boolean }): QueueFacts {
  const noEngine =
    options.role !== 'api' && !options.executes
      ? `No harness can run it: this server has no model key and no harness configured, so it does not execute runs. ${NO_HARNESS_HINT}`
      : 'No engine is running: no server process that executes runs is up (`hangar serve --role engine` or `--role all`, with a model key or HANGAR_CONFIG).';
  return {
    engineAlive: memo((db) => engineAlive(db, config.runLeaseSeconds * 2), 1000),
    workerConnected: (db, teamUid, host) => workerConnected(db, teamUid, host, config.workerHeartbeatSeconds * 3),
    noEngine,
    limits: { global: config.maxConcurrentRuns, perTeam: config.maxConcurrentRunsPerTeam },
  };
}
