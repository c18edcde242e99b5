import type { Refusal, RefusalReason } from './proxy/protocol.js';
import { refusalLine } from './refusal-words.js';
import { allowLineFor } from './rules.js';
import type { NetworkPhase } from './schemas.js';

/**
 * A run's account of what its network refused: one entry per phase, host and port, however often it was tried,
 * with the entry that would allow it. This is what the run's answer (`network_refusals`), the CLI, the run page and
 * the pull request's body show.
 */
export interface RefusalEntry {
  phase: NetworkPhase;
  host: string;
  /** The port asked for; absent for a DNS question. */
  port?: number;
  reason: RefusalReason;
  attempts: number;
  first_at: string;
  last_at: string;
  /** What to add to network.<phase>.allow; only for hosts refused for not being on the list. */
  allow_line?: string;
}

export class RefusalAccount {
  private readonly entries = new Map<string, RefusalEntry>();

  /** Counts one refusal; answers the entry and whether it is new (a first attempt goes on the timeline at once). */
  add(refusal: Refusal): { entry: RefusalEntry; first: boolean } {
    const key = `${refusal.phase} ${refusal.host} ${refusal.port ?? ''}`;
    const known = this.entries.get(key);
    if (known) {
      known.attempts += 1;
      known.last_at = refusal.at;
      return { entry: known, first: false };
    }
    const entry: RefusalEntry = {
      phase: refusal.phase,
      host: refusal.host,
      ...(refusal.port !== undefined ? { port: refusal.port } : {}),
      reason: refusal.reason,
      attempts: 1,
      first_at: refusal.at,
      last_at: refusal.at,
      ...(refusal.reason === 'not_allowed' ? { allow_line: allowLineFor(refusal.host, refusal.port) } : {}),
    };
    this.entries.set(key, entry);
    return { entry, first: true };
  }

  list(): RefusalEntry[] {
    return [...this.entries.values()].sort((a, b) => a.first_at.localeCompare(b.first_at));
  }
}

/** The paragraph a pull request's body gets when its run was refused hosts; empty when none were. */
export function refusalsMarkdown(entries: RefusalEntry[]): string {
  if (entries.length === 0) return '';
  const lines = entries.map((entry) => `- ${refusalLine(entry, (text) => `\`${text}\``)}`);
  return ["These hosts were refused by the environment's network allow list:", '', ...lines, ''].join('\n');
}

/** A timeline event of the account: `network_refused` (one entry, its first attempt) or `network_refusals` (all). */
export interface AccountEvent {
  execution_id: string | number | null;
  event_type: string;
  payload: Record<string, unknown> | null;
}

/**
 * A run's account from its timeline, over all its executions: an execution's closing `network_refusals` holds its
 * counts; one still running (or one that ended without writing it) has its `network_refused` entries, once each.
 * The same phase, host and port across executions is one entry, attempts summed.
 */
export function refusalsFromEvents(events: AccountEvent[]): RefusalEntry[] {
  const byExecution = new Map<string, Map<string, RefusalEntry>>();
  const closed = new Set<string>();
  for (const event of events) {
    const execution = String(event.execution_id ?? '');
    const entries = byExecution.get(execution) ?? new Map<string, RefusalEntry>();
    byExecution.set(execution, entries);
    if (event.event_type === 'network_refusals' && Array.isArray(event.payload?.refusals)) {
      closed.add(execution);
      entries.clear();
      for (const entry of event.payload.refusals as RefusalEntry[]) entries.set(keyOf(entry), { ...entry });
    } else if (event.event_type === 'network_refused' && event.payload && !closed.has(execution)) {
      const entry = event.payload as unknown as Omit<RefusalEntry, 'attempts' | 'last_at'>;
      entries.set(keyOf(entry), { ...entry, attempts: 1, last_at: entry.first_at });
    }
  }
  const merged = new Map<string, RefusalEntry>();
  for (const entries of byExecution.values())
    for (const entry of entries.values()) {
      const known = merged.get(keyOf(entry));
      if (!known) merged.set(keyOf(entry), entry);
      else {
        known.attempts += entry.attempts;
        if (entry.first_at < known.first_at) known.first_at = entry.first_at;
        if (entry.last_at > known.last_at) known.last_at = entry.last_at;
      }
    }
  return [...merged.values()].sort((a, b) => a.first_at.localeCompare(b.first_at));
}

function keyOf(entry: Pick<RefusalEntry, 'phase' | 'host' | 'port'>): string {
  return `${entry.phase} ${entry.host} ${entry.port ?? ''}`;
}
