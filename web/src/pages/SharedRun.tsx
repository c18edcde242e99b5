// A run opened by its share link (/shared/run#<secret>), for people without a key: its summary, conversation and
// timeline, and for an EDITOR link the follow-up form. The secret is the URL's fragment, which the browser sends to
// no server; the page hands it to the API in a header (src/runs/sharing/http.ts), never in a URL.
import { type FormEvent, useState } from 'react';
import { fetchApi, jsonOf } from '../../../src/platform/http/api-fetch';
import { API_BASE, ApiProblem } from '../api/client';
import type { Conversation, SharedRun, TimelineEvent } from '../api/types';
import { ConversationView } from '../components/Conversation';
import { ErrorMessage, Loading, PageHeader, StateBadge, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { TimelineView } from '../run/Timeline';

const SECRET_HEADER = 'x-hangar-share-secret';

function sharedApi(secret: string) {
  const call = async <T,>(path: string, init: RequestInit = {}): Promise<T> =>
    jsonOf<T>(
      await fetchApi(`${API_BASE}/shared/run${path}`, {
        ...init,
        headers: { [SECRET_HEADER]: secret, ...(init.headers as Record<string, string> | undefined) },
      }),
    );
  return {
    run: (signal: AbortSignal) => call<SharedRun>('', { signal }),
    conversation: (signal: AbortSignal) =>
      call<Omit<Conversation, 'conversation_id'>>('/conversation', { signal }).then(
        (found) => ({ conversation_id: '', ...found }) as Conversation,
        (error: unknown) => {
          if (error instanceof ApiProblem && error.status === 404) return null;
          throw error;
        },
      ),
    timeline: (signal: AbortSignal) => call<{ events: TimelineEvent[] }>('/timeline', { signal }),
    followup: (message: string) =>
      call('/followups', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      }),
  };
}

export function SharedRunPage() {
  const secret = decodeURIComponent(window.location.hash.replace(/^#/, ''));
  const api = sharedApi(secret);
  const [stopped, setStopped] = useState(false);
  // One request chain per refresh: the run first, so a revoked link costs one failed look-up, and then none, as
  // refreshing stops (each failure counts against the address, like a wrong API key).
  const shared = useResource(
    async (signal) => {
      try {
        const run = await api.run(signal);
        const [conversation, timeline] = await Promise.all([api.conversation(signal), api.timeline(signal)]);
        return { run, conversation, timeline };
      } catch (error) {
        if (error instanceof ApiProblem && (error.status === 404 || error.status === 429)) setStopped(true);
        throw error;
      }
    },
    secret,
    { pollMs: stopped ? undefined : 5000 },
  );
  const item = stopped ? undefined : shared.data?.run;
  const conversation = { data: shared.data?.conversation };
  const timeline = { data: shared.data?.timeline, reload: shared.reload };
  const run = shared;

  if (!item)
    return (
      <main id="main" className="shared-run">
        <PageHeader title="Shared run" />
        {run.loading ? (
          <Loading what="Opening the shared run" />
        ) : (
          <ErrorMessage
            error={run.error}
            title="This link opens nothing: it was revoked, its run was deleted, or it is incomplete"
          />
        )}
      </main>
    );

  return (
    <main id="main" className="shared-run">
      <PageHeader
        title={item.title}
        subtitle={
          item.public_access === 'EDITOR' ? 'Shared with you: you may send follow-ups' : 'Shared with you to read'
        }
      />
      <p>
        <StateBadge state={item.state} /> {item.status_message?.message}
      </p>
      <dl className="facts">
        <dt>Started by</dt>
        <dd>{item.creator.display_name ?? 'a member of the team'}</dd>
        <dt>Created</dt>
        <dd>
          <Time value={item.created_at} />
        </dd>
        {item.harness && (
          <>
            <dt>Harness</dt>
            <dd>{item.harness}</dd>
          </>
        )}
        {item.model_id && (
          <>
            <dt>Model</dt>
            <dd>{item.model_id}</dd>
          </>
        )}
      </dl>
      <h2>Prompt</h2>
      <pre className="output">{item.prompt}</pre>
      <div className="run-columns">
        <section aria-labelledby="shared-conversation" className="run-main">
          <h2 id="shared-conversation">Conversation</h2>
          {conversation.data === null && <p className="muted">The agent has not said anything yet.</p>}
          <ErrorMessage error={shared.error} title="Could not refresh the run" />
          {conversation.data && <ConversationView conversation={conversation.data} />}
          {item.public_access === 'EDITOR' && <SharedFollowup send={api.followup} onSent={timeline.reload} />}
        </section>
        <aside className="run-side">
          <section aria-labelledby="shared-artifacts">
            <h2 id="shared-artifacts">Artifacts</h2>
            {item.artifacts.length === 0 ? (
              <p className="muted">No artifacts reported.</p>
            ) : (
              <ul className="artifacts">
                {item.artifacts.map((artifact) => (
                  <li key={`${artifact.artifact_type}-${artifact.created_at}-${artifact.url ?? artifact.title ?? ''}`}>
                    {artifact.artifact_type}{' '}
                    {artifact.url ? <a href={artifact.url}>{artifact.title ?? artifact.url}</a> : artifact.title}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="shared-timeline">
            <h2 id="shared-timeline">Timeline</h2>
            <TimelineView events={timeline.data?.events ?? []} />
          </section>
        </aside>
      </div>
    </main>
  );
}

function SharedFollowup({ send, onSent }: { send(message: string): Promise<unknown>; onSent(): Promise<void> }) {
  const followup = useAction();
  const [message, setMessage] = useState('');
  const [sent, setSent] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if ((await followup.run(() => send(message))) === undefined) return;
    setSent(message);
    setMessage('');
    await onSent();
  };
  return (
    <form className="followup stack" onSubmit={submit}>
      <label>
        Follow-up message
        <textarea rows={3} value={message} onChange={(event) => setMessage(event.target.value)} required />
      </label>
      <ErrorMessage error={followup.error} title="Could not send the follow-up" />
      {sent && <p className="muted">Sent: the run takes it as if its creator had.</p>}
      <div>
        <button type="submit" disabled={followup.pending}>
          {followup.pending ? 'Sending…' : 'Send follow-up'}
        </button>
      </div>
    </form>
  );
}
