import { redactBytes } from '../../platform/redaction/bytes.js';
import type { Redactor } from '../../platform/redaction/redactor.js';
import type { Finish, TimelineEvent, TranscriptRow, Transition } from '../../runs/index.js';
import type { ArtifactSink, RunLedger } from '../run/ledger.js';

const events = (redactor: Redactor, list: TimelineEvent[]) => list.map((event) => redactor.deep(event));
const rows = (redactor: Redactor, list: TranscriptRow[]) =>
  list.map((row) => ({ ...row, line: redactor.text(row.line) }));

/**
 * A run's ledger with the run's secret values replaced by `[REDACTED:NAME]` in everything written through it:
 * timeline events, transcript lines, the status message and usage of the end, artifacts (their data, and the
 * bytes of text files). The engine's and a worker's executions both write through it.
 */
export function redactingLedger(ledger: RunLedger, redactor: Redactor): RunLedger {
  const artifacts: ArtifactSink = {
    report: (run, body) => ledger.artifacts.report(run, redactor.deep(body)),
    upload: (run, query, bytes, mediaType) =>
      ledger.artifacts.upload(run, redactor.deep(query), redactBytes(redactor, bytes, mediaType), mediaType),
  };
  const redacting: RunLedger = Object.create(ledger, {
    artifacts: { value: artifacts },
    transition: {
      value: (transition: Transition) =>
        ledger.transition({ ...transition, events: events(redactor, transition.events) }),
    },
    events: {
      value: (runId: string, executionId: number, list: TimelineEvent[]) =>
        ledger.events(runId, executionId, events(redactor, list)),
    },
    transcript: { value: (list: TranscriptRow[]) => ledger.transcript(rows(redactor, list)) },
    requeue: {
      value: (runId: string, executionId: number, reason: string) =>
        ledger.requeue(runId, executionId, redactor.text(reason)),
    },
    finish: {
      value: (finish: Finish) =>
        ledger.finish({
          ...finish,
          outcome: redactor.deep(finish.outcome),
          before: events(redactor, finish.before),
          ...(finish.transcript ? { transcript: rows(redactor, finish.transcript) } : {}),
        }),
    },
  });
  return redacting;
}
