import { field } from './form-field.ts';
import { type FormEvent, useState } from 'react';
import { api, ApiError } from './api.ts';

export function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: () => Promise<void> }) {
  const [error, setError] = useState<string>();
  const [needsCode, setNeedsCode] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => field(form, name).trim() || undefined;
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', '/api/v1/console/session', {
        body: { email: text('email'), password: field(form, 'password'), totpCode: text('totpCode'), organizationId: text('organizationId') },
      });
      await onSignedIn();
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 'MfaRequired') setNeedsCode(true);
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in">
      <h1>Sign in to Coffer</h1>
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={submit}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {needsCode && (
          <label>
            Authenticator code
            <input name="totpCode" inputMode="numeric" autoComplete="one-time-code" required />
          </label>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
