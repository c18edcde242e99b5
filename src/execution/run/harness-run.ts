import type { TranscriptRow } from '../../runs/index.js';
import { type HarnessEvent, progressPayload, protocolEvents } from '../../runs/index.js';
import type { Harness, HarnessSession, HarnessTask } from '../harnesses/harness.js';
import { SplitLineRedaction } from '../redaction/index.js';
import type { SandboxExit } from '../sandbox/backend.js';
import { recordArtifactEvent } from './artifact-events.js';
import type { ExecutionContext } from './context.js';
import { OutputTail } from './output-tail.js';
import { TranscriptWriter } from './transcript-writer.js';

export type FinalEvent = Extract<HarnessEvent, { type: 'done' | 'failed' | 'ask_user' }>;

export interface HarnessRunResult {
  exit: SandboxExit;
  /** The last `done`, `failed` or `ask_user` event, if the harness wrote one. */
  final: FinalEvent | null;
  usage: Record<string, number> | null;
  /** What the harness wrote to stderr that explains a failure: its first error lines and its last lines (OutputTail). */
  diagnostics: string[];
  /** Transcript lines left for the caller to write with the execution's end (only with `deferTranscriptTail`). */
  transcriptTail: TranscriptRow[];
}

export interface HarnessRun {
  session: HarnessSession;
  result: Promise<HarnessRunResult>;
}

/** Whether a harness writes the event protocol (the default) or plain text. */
export function transcriptFormat(harness: Harness): 'events' | 'text' {
  return (harness as { transcriptFormat?: 'events' | 'text' }).transcriptFormat ?? 'events';
}

/** How to read a harness's output lines as events: its own translator (a CLI's stream format), else the protocol. */
export function eventReader(harness: Pick<Harness, 'translate'> | undefined): (line: string) => HarnessEvent[] {
  if (harness?.translate) return (line) => harness.translate!(line);
  return protocolEvents;
}

/**
 * Starts a harness for one execution and follows its output: every line goes to the transcript, usage is
 * summed, artifacts are recorded as they are reported, and the final event decides how the execution ends.
 */
export async function startHarnessRun(
  context: ExecutionContext,
  harness: Harness,
  task: HarnessTask,
  teamUid: string,
  /** Leave the lines not yet written when the harness exits to the caller, who writes them with the end: one write less per run. */
  deferTranscriptTail = false,
  /**
   * Whether the caller recorded the agent's start, which it does once the harness process exists (see Execution).
   * Nothing the harness reports is written before: a harness whose start could not be recorded (its run was
   * cancelled or taken back meanwhile) is stopped, and what it wrote is dropped.
   */
  startRecorded: Promise<boolean> = Promise.resolve(true),
  /** Called with the usage so far after each usage event (the run's spend cap is checked on it). */
  onUsage?: (usage: Readonly<Record<string, number>>) => void,
): Promise<HarnessRun> {
  const { ledger: writes, log } = context;
  const run = { runId: task.runId, executionId: task.executionId, teamUid };
  const transcript = new TranscriptWriter(
    async (rows) => {
      if (await startRecorded) await writes.transcript(rows);
    },
    task.runId,
    task.executionId,
    context.redactor ? new SplitLineRedaction(context.redactor) : undefined,
  );
  const structured = transcriptFormat(harness) === 'events';
  const eventsOf = eventReader(harness);
  let final: FinalEvent | null = null;
  let usage: Record<string, number> | null = null;
  // What protocol events write besides the transcript, one at a time: artifacts and progress land in the order
  // the harness reported them.
  let recording: Promise<void> = startRecorded.then(
    () => undefined,
    () => undefined,
  );
  const record = (what: string, write: () => Promise<void>) => {
    recording = recording
      .then(async () => {
        if (await startRecorded) await write();
      })
      .catch((error) => log.warn({ err: error, runId: task.runId }, `could not record ${what}`));
  };
  const diagnostics = new OutputTail();

  const onEvent = (event: HarnessEvent) => {
    switch (event.type) {
      case 'usage': {
        usage ??= {};
        for (const key of ['input_tokens', 'output_tokens', 'total_tokens', 'inference_cost'] as const) {
          if (event[key] !== undefined) usage[key] = (usage[key] ?? 0) + event[key];
        }
        if (
          event.total_tokens === undefined &&
          (event.input_tokens !== undefined || event.output_tokens !== undefined)
        ) {
          usage.total_tokens = (usage.total_tokens ?? 0) + (event.input_tokens ?? 0) + (event.output_tokens ?? 0);
        }
        onUsage?.(usage);
        break;
      }
      case 'progress':
        // On the timeline, where people watching the run (and its live stream) see it.
        record('progress', () =>
          writes.events(task.runId, task.executionId, [{ type: 'agent_progress', payload: progressPayload(event) }]),
        );
        break;
      case 'artifact':
        record('an artifact', async () => {
          const refused = await recordArtifactEvent(
            writes.artifacts,
            run,
            task.workspace,
            event,
            writes.maxArtifactBytes,
          );
          if (refused)
            await writes.events(task.runId, task.executionId, [
              { type: 'artifact_refused', payload: { artifact_type: event.artifact_type, reason: refused } },
            ]);
        });
        break;
      case 'done':
      case 'failed':
      case 'ask_user':
        final = event;
        break;
    }
  };

  const session = await harness.start(task, {
    input: (line) => transcript.add('input', line),
    diagnostic: (line) => diagnostics.push(line),
    output: (line) => {
      transcript.add('output', line);
      if (!structured) return;
      for (const event of eventsOf(line)) onEvent(event);
    },
  });
  const result = session.exited.then(async (exit) => {
    await recording;
    const notWritten = (error: unknown) =>
      log.error({ err: error, runId: task.runId }, 'could not write the transcript');
    let transcriptTail: TranscriptRow[] = [];
    if (deferTranscriptTail) {
      transcriptTail = await transcript.takeRest();
      if (transcript.writeError) notWritten(transcript.writeError);
    } else await transcript.flush().catch(notWritten);
    return { exit, final, usage, diagnostics: diagnostics.lines(), transcriptTail };
  });
  return { session, result };
}
