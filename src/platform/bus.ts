import { sql } from 'kysely';
import type { Database } from './db/connect.js';
import { outsideTraces } from './tracing.js';

/** What the engine holding a run is asked to do: stop it, or pick up a follow-up (for the agent or a debug agent). */
export type RunControlAction = 'cancel' | 'agent' | 'debug';

/**
 * Typed wake-ups between loops and replicas, carried by PostgreSQL NOTIFY (sent by triggers, see migration
 * 0007, and for new runs by announceDispatch). Notifications can be lost while a connection is down, so every
 * consumer also polls; they only make things fast.
 */
export class Bus {
  private readonly activity = new Map<string, Set<() => void>>();
  /** This process's own listeners, woken at once rather than after the NOTIFY's round trip. */
  private readonly dispatchHandlers: Array<() => void> = [];
  private readonly scheduleHandlers: Array<() => void> = [];
  private readonly unsubscribes: Array<() => Promise<void>> = [];

  private constructor(private readonly database: Database) {}

  static async open(database: Database): Promise<Bus> {
    const bus = new Bus(database);
    bus.unsubscribes.push(
      await database.listen('hangar_run_activity', (runId) => {
        for (const wake of bus.activity.get(runId) ?? []) wake();
      }),
    );
    return bus;
  }

  /** Channels with a NOTIFY on its way, and whether another was asked for meanwhile. */
  private readonly announcing = new Map<string, { again: boolean }>();

  /**
   * Wakes the listeners of `channel` on every replica after something was committed: one NOTIFY in a statement
   * of its own (it writes nothing, so its commit waits for no WAL flush; a NOTIFY inside a writing transaction
   * would serialise every such commit on PostgreSQL's notify lock), and while one is on its way, the next ones
   * fold into a single follow-up. Lost wake-ups only cost latency: listeners also poll.
   */
  announce(channel: string): void {
    const pending = this.announcing.get(channel);
    if (pending) {
      pending.again = true;
      return;
    }
    const state = { again: false };
    this.announcing.set(channel, state);
    // Outside any trace: the wake-up serves every change folded into it, not the request that happened to send it.
    void outsideTraces(() => sql`SELECT pg_notify(${channel}, '')`.execute(this.database.db))
      .catch(() => undefined)
      .finally(() => {
        this.announcing.delete(channel);
        if (state.again) this.announce(channel);
      });
  }

  /** New runs were committed: wake the engines and worker hubs, this process's at once, other replicas' by NOTIFY. */
  announceDispatch(): void {
    for (const handler of this.dispatchHandlers) handler();
    this.announce('hangar_dispatch');
  }

  /** Runs were queued (here or on another replica) or capacity was freed. */
  async onDispatch(handler: () => void): Promise<void> {
    this.dispatchHandlers.push(handler);
    this.unsubscribes.push(await this.database.listen('hangar_dispatch', handler));
  }

  /** Schedules were created, changed or resumed in this process: wake its scheduler (other replicas' poll). */
  schedulesChanged(): void {
    for (const handler of this.scheduleHandlers) handler();
  }

  onSchedulesChanged(handler: () => void): void {
    this.scheduleHandlers.push(handler);
  }

  async onRunControl(handler: (action: RunControlAction, runId: string) => void): Promise<void> {
    this.unsubscribes.push(
      await this.database.listen('hangar_run_control', (payload) => {
        const separator = payload.indexOf(':');
        handler(payload.slice(0, separator) as RunControlAction, payload.slice(separator + 1));
      }),
    );
  }

  /** A run's timeline or transcript grew. Returns the unsubscribe function. */
  onRunActivity(runId: string, wake: () => void): () => void {
    let set = this.activity.get(runId);
    if (!set) {
      set = new Set();
      this.activity.set(runId, set);
    }
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.activity.delete(runId);
    };
  }

  async close(): Promise<void> {
    this.dispatchHandlers.length = 0;
    this.scheduleHandlers.length = 0;
    for (const unsubscribe of this.unsubscribes.splice(0)) await unsubscribe().catch(() => undefined);
  }
}
