// The signed-in session: an API key (and optionally a team) kept in sessionStorage, or localStorage when the
// person asks to be remembered on this device. Signing out forgets both.
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { type ApiProblem, type Credentials, HangarClient } from './api/client';

const KEY = 'hangar.credentials';

function stored(): Credentials | undefined {
  for (const storage of [sessionStorage, localStorage]) {
    try {
      const raw = storage.getItem(KEY);
      if (raw) return JSON.parse(raw) as Credentials;
    } catch {
      // Unreadable: treat as signed out.
    }
  }
  return undefined;
}

function forget(): void {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

interface Session {
  client: HangarClient | undefined;
  /** Why the last session ended, shown on the sign-in page. */
  notice: string | undefined;
  signIn(credentials: Credentials, remember: boolean): void;
  signOut(notice?: string): void;
}

const SessionContext = createContext<Session | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [credentials, setCredentials] = useState<Credentials | undefined>(stored);
  const [notice, setNotice] = useState<string>();

  const signOut = useCallback((reason?: string) => {
    forget();
    setNotice(reason);
    setCredentials(undefined);
  }, []);

  const signIn = useCallback((next: Credentials, remember: boolean) => {
    forget();
    (remember ? localStorage : sessionStorage).setItem(KEY, JSON.stringify(next));
    setNotice(undefined);
    setCredentials(next);
  }, []);

  const client = useMemo(
    () =>
      credentials &&
      new HangarClient(credentials, (error: ApiProblem) =>
        signOut(`Signed out: Hangar refused the API key (${error.detail || error.title}).`),
      ),
    [credentials, signOut],
  );

  const value = useMemo(() => ({ client, notice, signIn, signOut }), [client, notice, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The API client of the signed-in session (pages are only shown when signed in). */
export function useClient(): HangarClient {
  const { client } = useSession();
  if (!client) throw new Error('not signed in');
  return client;
}
