import type { ChildProcess } from 'node:child_process';

/**
 * The `hangar serve` processes this test process started and that still run. While one does, it may move runs of
 * a database a test server here shares (PostgreSQL), and no signal of this process tells of it: the waits of
 * engine.ts read runs again as often as they polled before (waitForState).
 */
const running = new Set<ChildProcess>();

export function trackServerProcess(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  running.add(child);
  child.once('exit', () => running.delete(child));
}

export function serverProcessesRunning(): boolean {
  return running.size > 0;
}
