import { type FormEvent, useEffect, useRef, useState } from 'react';
import { HangarClient } from '../api/client';
import { ErrorMessage } from '../components/ui';
import { useAction } from '../hooks';
import { useSession } from '../session';

/** Sign in with an API key, checked by asking Hangar for one run before it is kept. */
export function SignInPage() {
  const { signIn, notice } = useSession();
  const [apiKey, setApiKey] = useState('');
  const [teamUid, setTeamUid] = useState('');
  const [remember, setRemember] = useState(false);
  const check = useAction();
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    document.title = 'Sign in · Hangar';
    heading.current?.focus();
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const credentials = { apiKey: apiKey.trim(), ...(teamUid.trim() ? { teamUid: teamUid.trim() } : {}) };
    const ok = await check.run(async () => {
      await new HangarClient(credentials).get('/agent/runs', { limit: 1 });
      return true;
    });
    if (ok) signIn(credentials, remember);
  };

  return (
    <main id="main" className="sign-in">
      <h1 ref={heading} tabIndex={-1}>
        Hangar
      </h1>
      <p className="muted">Sign in with an API key to watch and manage your team's agent runs.</p>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit} className="card stack">
        <label>
          API key
          <input
            type="password"
            name="api-key"
            autoComplete="current-password"
            required
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
            aria-describedby="api-key-help"
          />
        </label>
        <p id="api-key-help" className="muted small">
          Keys start with <code>hgr_</code> (make one for <code>HANGAR_BOOTSTRAP_API_KEY</code> with{' '}
          <code>echo hgr_$(openssl rand -hex 24)</code>). The first start of Hangar writes one to{' '}
          <code>.hangar/bootstrap-api-key</code>; an administrator makes more with <code>hangar admin keys create</code>
          .
        </p>
        <label>
          Team UID <span className="muted">(optional)</span>
          <input
            name="team"
            value={teamUid}
            onChange={(event) => setTeamUid(event.target.value)}
            aria-describedby="team-help"
          />
        </label>
        <p id="team-help" className="muted small">
          Only needed when you belong to several teams.
        </p>
        <label className="checkbox">
          <input type="checkbox" checked={remember} onChange={(event) => setRemember(event.target.checked)} />
          Remember me on this device
        </label>
        <ErrorMessage error={check.error} title="Could not sign in" />
        <button type="submit" disabled={check.pending || !apiKey.trim()}>
          {check.pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
