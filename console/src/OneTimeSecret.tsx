/**
 * A credential the API answers once (a new client secret, an invite token): shown until the user says they have
 * kept it or leaves the screen. It lives only in this component's state, so nothing shows it again.
 */
export function OneTimeSecret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div role="region" aria-label={label} className="once">
      <p>
        <strong>{label}</strong>: copy it now. Coffer keeps only a digest of it and will not show it again.
      </p>
      <code className="revealed">{value}</code>
      <div>
        <button type="button" onClick={() => void navigator.clipboard?.writeText(value)}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </div>
  );
}
