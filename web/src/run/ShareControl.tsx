// The run page's Share control: the run's share link (config.session_sharing) as it stands, a new link (shown once,
// as Hangar keeps only its hash) and its revocation. Sharing and revoking are the creator's or a team admin's: the
// server refuses others with 403, shown here in its words.
import { useState } from 'react';
import { seg } from '../api/client';
import type { Run, ShareLink } from '../api/types';
import { confirmed, ErrorMessage, SecretOnce, Time } from '../components/ui';
import { useAction } from '../hooks';
import { useClient } from '../session';

const LEVEL_WORDS = {
  VIEWER: 'Anyone with the link can read this run.',
  EDITOR: 'Anyone with the link can read this run and send it follow-ups.',
} as const;

export function ShareControl({ item, onChanged }: { item: Run; onChanged(): Promise<void> }) {
  const client = useClient();
  const action = useAction();
  const [fresh, setFresh] = useState<string>();
  const path = `/agent/runs/${seg(item.run_id)}/sharing`;
  const link = item.session_sharing;

  const share = async (public_access: 'VIEWER' | 'EDITOR') => {
    if (link && !confirmed('Make a new link? The current one stops working.')) return;
    const made = await action.run(() => client.put<ShareLink>(path, { public_access }));
    if (made?.url) setFresh(made.url);
    if (made) await onChanged();
  };
  const revoke = async () => {
    if (!confirmed('Revoke the share link? Whoever holds it loses access at once.')) return;
    const done = await action.run(() => client.delete(path));
    if (done) {
      setFresh(undefined);
      await onChanged();
    }
  };

  return (
    <section aria-labelledby="sharing-title">
      <h2 id="sharing-title">Sharing</h2>
      {link ? (
        <p>
          {LEVEL_WORDS[link.public_access]} Shared <Time value={link.created_at} />.
        </p>
      ) : (
        <p className="muted">Only members of the team see this run.</p>
      )}
      {fresh && <SecretOnce label="Share link" value={fresh} onDismiss={() => setFresh(undefined)} />}
      <div className="button-row">
        <button type="button" className="secondary" disabled={action.pending} onClick={() => share('VIEWER')}>
          {link ? 'New read-only link' : 'Share read-only'}
        </button>
        <button type="button" className="secondary" disabled={action.pending} onClick={() => share('EDITOR')}>
          {link ? 'New link with follow-ups' : 'Share with follow-ups'}
        </button>
        {link && (
          <button type="button" className="danger" disabled={action.pending} onClick={revoke}>
            Revoke link
          </button>
        )}
      </div>
      <ErrorMessage error={action.error} title="Could not change the sharing" />
    </section>
  );
}
