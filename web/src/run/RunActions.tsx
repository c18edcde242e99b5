// The run page's header buttons: cancel (while the run goes) and the transcript's download.
import { seg } from '../api/client';
import { type ExplainedRun, isTerminal } from '../api/types';
import { confirmed, ErrorMessage } from '../components/ui';
import { type Action, useAction } from '../hooks';
import { useClient } from '../session';

export interface RunActionsState {
  cancel: Action;
  transcript: Action;
}

export function useRunActions(): RunActionsState {
  return { cancel: useAction(), transcript: useAction() };
}

export function RunActions({
  runId,
  item,
  actions,
  hasTranscript,
  onCancelled,
}: {
  runId: string;
  item: ExplainedRun;
  actions: RunActionsState;
  hasTranscript: boolean;
  onCancelled(): Promise<void>;
}) {
  const client = useClient();
  const { cancel, transcript } = actions;
  const doCancel = async () => {
    if (!confirmed('Cancel this run? Its agent is stopped.')) return;
    const done = await cancel.run(() => client.post(`/agent/runs/${seg(runId)}/cancel`));
    if (done !== undefined) await onCancelled();
  };
  return (
    <>
      {!isTerminal(item.state) && item.is_run_type_cancellable && (
        <button type="button" className="danger" onClick={doCancel} disabled={cancel.pending}>
          {cancel.pending ? 'Cancelling…' : 'Cancel run'}
        </button>
      )}
      {hasTranscript && (
        <button
          type="button"
          className="secondary"
          disabled={transcript.pending}
          onClick={() =>
            transcript.run(() => client.download(`/agent/runs/${seg(runId)}/transcript`, `transcript-${runId}.jsonl`))
          }
        >
          Download transcript
        </button>
      )}
    </>
  );
}

/** The actions' errors, shown under the page's header. */
export function RunActionErrors({ actions }: { actions: RunActionsState }) {
  return (
    <>
      <ErrorMessage error={actions.cancel.error} title="Could not cancel the run" />
      <ErrorMessage error={actions.transcript.error} title="No transcript" />
    </>
  );
}
