/**
 * What one run may use of the proxy, shared by its phases' leases: connections open at once and bytes moved. A run
 * over its budget has its open connections ended and new ones refused, so one run cannot starve the others.
 */
export class RunBudgets {
  private readonly runs = new Map<string, { open: Set<{ destroy(): void }>; bytes: number; leases: number }>();

  constructor(private readonly limits: { maxConnections: number; byteBudget: number }) {}

  attach(run: string): void {
    const entry = this.runs.get(run) ?? { open: new Set(), bytes: 0, leases: 0 };
    entry.leases += 1;
    this.runs.set(run, entry);
  }

  detach(run: string): void {
    const entry = this.runs.get(run);
    if (!entry) return;
    entry.leases -= 1;
    if (entry.leases <= 0) {
      for (const connection of entry.open) connection.destroy();
      this.runs.delete(run);
    }
  }

  /** Why a new connection is refused, or undefined once it is counted (release it with `close`). */
  admit(run: string, connection: { destroy(): void }): 'connection_limit' | 'byte_budget' | undefined {
    const entry = this.runs.get(run);
    if (!entry) return 'connection_limit';
    if (entry.bytes >= this.limits.byteBudget) return 'byte_budget';
    if (entry.open.size >= this.limits.maxConnections) return 'connection_limit';
    entry.open.add(connection);
    return undefined;
  }

  close(run: string, connection: { destroy(): void }): void {
    this.runs.get(run)?.open.delete(connection);
  }

  /** Counts bytes; true when the run just went over its budget (its connections are then ended). */
  spend(run: string, bytes: number): boolean {
    const entry = this.runs.get(run);
    if (!entry) return false;
    const before = entry.bytes;
    entry.bytes += bytes;
    if (before < this.limits.byteBudget && entry.bytes >= this.limits.byteBudget) {
      for (const connection of entry.open) connection.destroy();
      return true;
    }
    return false;
  }
}
