/**
 * The sleep of a background loop that something else may cut short: a loop waits with `sleep(ms)` and another
 * part (a NOTIFY, a new row in this process) calls `wake()` to end the wait at once. A wake while the loop is
 * not sleeping does nothing: the loop looks at its work anyway before it sleeps again.
 */
export class WakeableSleep {
  private wakeNow: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeNow = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeNow = done;
    });
  }

  wake(): void {
    this.wakeNow?.();
  }
}
