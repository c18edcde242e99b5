// One run: its summary, conversation, artifacts and timeline, followed live (the parts are in ../run/).
import { Link, useParams } from 'react-router';
import { isTerminal } from '../api/types';
import { ArtifactList } from '../components/Artifacts';
import { ErrorMessage, Loading, PageHeader } from '../components/ui';
import { FollowupForm } from '../run/FollowupForm';
import { NetworkRefusals } from '../run/NetworkRefusals';
import { RunActionErrors, RunActions, useRunActions } from '../run/RunActions';
import { isPlainText, RunConversation } from '../run/RunConversation';
import { RunSummary } from '../run/RunSummary';
import { ShareControl } from '../run/ShareControl';
import { TimelineView } from '../run/Timeline';
import { useRunData } from '../run/useRunData';

export function RunPage() {
  const runId = useParams().runId!;
  const { run, conversation, environment, config, follow } = useRunData(runId);
  const actions = useRunActions();

  const item = run.data;
  if (!item) {
    return (
      <>
        <PageHeader title="Run" />
        {run.loading ? (
          <Loading what="Loading the run" />
        ) : (
          <ErrorMessage error={run.error} title="Could not load the run" />
        )}
        <p>
          <Link to="/runs">Back to the runs</Link>
        </p>
      </>
    );
  }

  const ended = isTerminal(item.state);
  // 404 on the conversation: nothing was written, so there is no transcript to download either.
  const hasTranscript = Boolean(conversation.data) || isPlainText(conversation);
  const afterFollowup = async () => {
    await run.reload();
    if (follow.live === 'ended' || follow.live === 'failed') follow.restart();
  };

  return (
    <>
      <PageHeader title={item.title || item.run_id} subtitle={<Link to="/runs">← All runs</Link>}>
        <RunActions
          runId={runId}
          item={item}
          actions={actions}
          hasTranscript={hasTranscript}
          onCancelled={run.reload}
        />
      </PageHeader>
      <RunActionErrors actions={actions} />
      <ErrorMessage error={run.error} title="Could not refresh the run" />

      <RunSummary
        item={item}
        config={config}
        environment={environment.data}
        events={follow.events}
        live={follow.live}
      />

      <div className="run-columns">
        <section aria-labelledby="conversation-title" className="run-main">
          <h2 id="conversation-title">Conversation</h2>
          <RunConversation conversation={conversation} output={follow.output} ended={ended} />
          <FollowupForm runId={runId} onSent={afterFollowup} />
        </section>

        <aside className="run-side">
          <NetworkRefusals run={item} events={follow.events} />
          <ShareControl item={item} onChanged={run.reload} />
          <section aria-labelledby="artifacts-title">
            <h2 id="artifacts-title">Artifacts</h2>
            <ArtifactList artifacts={item.artifacts} />
          </section>
          <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">Timeline</h2>
            <ErrorMessage error={follow.liveError} title="Live updates unavailable" />
            <TimelineView events={follow.events} />
          </section>
        </aside>
      </div>
    </>
  );
}
