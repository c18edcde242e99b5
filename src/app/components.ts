/** A part of the server that runs between a start and a stop: a background loop, the HTTP listener, ... */
export interface Component {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/**
 * The components started so far, so that they stop in the reverse order of their start: whatever started later may
 * rely on what started before it until its own stop has returned.
 */
export class StartedComponents {
  private readonly started: Component[] = [];

  /** Starts `component`; should it fail, stops every component started before it and throws. */
  async start<T extends Component>(component: T): Promise<T> {
    try {
      await component.start();
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.started.push(component);
    return component;
  }

  /** Starts the components one after another, in the given order. */
  async startAll(components: Component[]): Promise<void> {
    for (const component of components) await this.start(component);
  }

  /** Stops every started component, last started first. All are stopped even if one fails; the first failure is thrown. */
  async stop(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const component of this.started.splice(0).reverse()) {
      try {
        await component.stop();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

/** A component for something that only has to be closed (it was opened before it was handed over). */
export function closing(close: () => void | Promise<void>): Component {
  return { start: () => undefined, stop: close };
}
