// The follow-up message form under the conversation.
import { type FormEvent, useState } from 'react';
import { seg } from '../api/client';
import { ErrorMessage } from '../components/ui';
import { useAction } from '../hooks';
import { useClient } from '../session';

/** `onSent` is called after the server took the message (the page reloads the run and follows it again). */
export function FollowupForm({ runId, onSent }: { runId: string; onSent(): Promise<void> }) {
  const client = useClient();
  const followup = useAction();
  const [message, setMessage] = useState('');
  const [sent, setSent] = useState<string>();

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const done = await followup.run(() => client.post(`/agent/runs/${seg(runId)}/followups`, { message }));
    if (done === undefined) return;
    setSent(message);
    setMessage('');
    await onSent();
  };

  return (
    <form className="followup stack" onSubmit={send}>
      <label>
        Follow-up message
        <textarea rows={3} value={message} onChange={(event) => setMessage(event.target.value)} required />
      </label>
      <ErrorMessage error={followup.error} title="Could not send the follow-up" />
      {sent !== undefined && !followup.error && (
        <p className="notice" role="status">
          Follow-up sent.
        </p>
      )}
      <div className="row">
        <button type="submit" disabled={followup.pending || !message.trim()}>
          {followup.pending ? 'Sending…' : 'Send follow-up'}
        </button>
      </div>
    </form>
  );
}
