import type { HarnessEvent } from '../../runs/index.js';
import type { SandboxExit } from '../sandbox/backend.js';
import type { HarnessTask } from './task.js';

export type { HarnessTask, TranscriptLine } from './task.js';

export interface HarnessSession {
  /** Whether `send` reaches the running harness; when false, follow-ups wait for the next execution. */
  readonly acceptsInput: boolean;
  /** Delivers a follow-up message to the running harness; false when it cannot take it now. */
  send(message: string): boolean;
  /** Stops the harness and everything it started; resolves when they are gone. */
  cancel(): Promise<void>;
  exited: Promise<SandboxExit>;
}

export interface HarnessSink {
  /** Every line the harness writes to its event stream, in order (the executor keeps it as the transcript). */
  output(line: string): void;
  /** What was written to the harness (the task and follow-ups), for the transcript. */
  input(line: string): void;
  /** Diagnostics the harness writes besides its event stream (stderr); the last lines explain a failure. */
  diagnostic(line: string): void;
}

/** Everything that runs an agent: the operator's `command` harnesses now, the coding-agent CLIs later. */
export interface Harness {
  readonly name: string;
  start(task: HarnessTask, sink: HarnessSink): Promise<HarnessSession>;
  /**
   * Whether its processes get network: a sandbox that decides once per execution (a container) gives the
   * execution network when its harness or its setup asks. Undefined: none.
   */
  readonly network?: boolean;
  /**
   * The protocol events on a line of the harness's own stream format (a CLI's stream JSON); absent for harnesses
   * that write the command-harness protocol itself.
   */
  translate?(line: string): HarnessEvent[];
}

/** The harness cannot start for a reason the run's owner or the operator must fix; the run fails with `errorCode`. */
export class HarnessStartError extends Error {
  override name = 'HarnessStartError';
  constructor(
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
  }
}
