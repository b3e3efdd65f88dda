import { useState } from 'react';
import { type Place, type SecretRow, secretsApi } from './api.ts';

type Run = (what: () => Promise<unknown>, done: string) => Promise<boolean>;

/** Lines of `before` and `after` side by side, each marked when it differs from the other side's line. */
function lineDiff(before: string, after: string) {
  const left = before.split('\n');
  const right = after.split('\n');
  return Array.from({ length: Math.max(left.length, right.length) }, (_, index) => ({
    before: left[index],
    after: right[index],
    changed: left[index] !== right[index],
  }));
}

/** A secret's earlier versions: each revealed on purpose (audited), compared with the current one, rolled back to. */
export function History({ place, secret, run }: { place: Place; secret: SecretRow; run: Run }) {
  const versions = Array.from({ length: secret.version }, (_, index) => secret.version - index);
  const [chosen, setChosen] = useState(Math.max(1, secret.version - 1));
  const [diff, setDiff] = useState<{ version: number; before: string; current: string }>();
  const [error, setError] = useState<string>();

  async function compare() {
    try {
      const [before, current] = await Promise.all([secretsApi.reveal(place, secret.secretKey, chosen), secretsApi.reveal(place, secret.secretKey)]);
      setDiff({ version: chosen, before, current });
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  async function rollBack() {
    const value = await secretsApi.reveal(place, secret.secretKey, chosen);
    await run(() => secretsApi.update(place, secret.secretKey, { secretValue: value }), `Rolled ${secret.secretKey} back to version ${chosen}`);
  }

  return (
    <div className="history" aria-label={`History of ${secret.secretKey}`} role="region">
      <p>
        {secret.secretKey} is at version {secret.version}.
      </p>
      <label>
        Version
        <select value={chosen} onChange={(event) => setChosen(Number(event.target.value))}>
          {versions.map((version) => (
            <option key={version} value={version}>
              {version === secret.version ? `${version} (current)` : version}
            </option>
          ))}
        </select>
      </label>
      <button type="button" onClick={() => void compare()}>
        Compare with current
      </button>
      <button type="button" disabled={chosen === secret.version} onClick={() => void rollBack()}>
        Roll back to version {chosen}
      </button>
      {error && <p role="alert">{error}</p>}
      {diff && (
        <table className="diff">
          <caption>Version {diff.version} and the current version</caption>
          <thead>
            <tr>
              <th scope="col">Version {diff.version}</th>
              <th scope="col">Current</th>
            </tr>
          </thead>
          <tbody>
            {lineDiff(diff.before, diff.current).map((line, index) => (
              <tr key={index} className={line.changed ? 'changed' : undefined}>
                <td>
                  <code>{line.before ?? ''}</code>
                </td>
                <td>
                  <code>{line.after ?? ''}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
