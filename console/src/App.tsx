import { useCallback, useEffect, useState } from 'react';
import { api, type Session, whenSignedOut } from './api.ts';
import { useLatestRead } from './resource.tsx';
import { Shell } from './Shell.tsx';
import { SignIn } from './SignIn.tsx';

type State = { kind: 'loading' } | { kind: 'signed-out'; notice?: string } | { kind: 'signed-in'; session: Session };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const begin = useLatestRead();
  const load = useCallback(async () => {
    const isLatest = begin();
    try {
      const session = await api<Session>('GET', '/api/v1/console/session');
      if (isLatest()) setState({ kind: 'signed-in', session });
    } catch {
      if (isLatest()) setState({ kind: 'signed-out' });
    }
  }, []);
  useEffect(() => {
    whenSignedOut(() => setState({ kind: 'signed-out', notice: 'Your session has ended. Sign in again.' }));
    void load();
  }, [load]);

  if (state.kind === 'loading') return <p className="loading">Loading…</p>;
  if (state.kind === 'signed-out') return <SignIn notice={state.notice} onSignedIn={load} />;
  return <Shell session={state.session} onSessionChanged={load} onSignedOut={() => setState({ kind: 'signed-out', notice: 'You have signed out.' })} />;
}
