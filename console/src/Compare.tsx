import { useEffect, useState } from 'react';
import type { Project } from './api.ts';
import { secretsApi } from './api.ts';

/** One folder's keys across every environment side by side; a value is read only when its cell is revealed (audited). */
export function Compare({ project }: { project: Project }) {
  const [secretPath, setSecretPath] = useState('/');
  const [keysByEnvironment, setKeysByEnvironment] = useState<Map<string, Set<string>>>();
  const [revealed, setRevealed] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();

  useEffect(() => {
    setKeysByEnvironment(undefined);
    setRevealed({});
    void Promise.all(
      project.environments.map(async (environment) => {
        const secrets = await secretsApi.list({ projectId: project.id, environment: environment.slug, secretPath }).catch(() => []);
        return [environment.slug, new Set(secrets.map((secret) => secret.secretKey))] as const;
      }),
    ).then((entries) => setKeysByEnvironment(new Map(entries)));
  }, [project, secretPath]);

  async function reveal(environment: string, key: string) {
    try {
      const value = await secretsApi.reveal({ projectId: project.id, environment, secretPath }, key);
      setRevealed((current) => ({ ...current, [`${environment}\u0000${key}`]: value }));
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  const keys = [...new Set([...(keysByEnvironment?.values() ?? [])].flatMap((set) => [...set]))].sort();
  return (
    <section aria-labelledby="compare-title">
      <h1 id="compare-title">{project.name}: compare environments</h1>
      <label>
        Folder
        <input value={secretPath} onChange={(event) => setSecretPath(event.target.value || '/')} />
      </label>
      {error && <p role="alert">{error}</p>}
      {!keysByEnvironment ? (
        <p>Loading…</p>
      ) : keys.length === 0 ? (
        <p className="empty">No secrets in this folder in any environment yet.</p>
      ) : (
        <table className="secrets compare">
          <thead>
            <tr>
              <th scope="col">Key</th>
              {project.environments.map((environment) => (
                <th scope="col" key={environment.slug}>
                  {environment.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key}>
                <th scope="row" className="key">
                  {key}
                </th>
                {project.environments.map((environment) => {
                  const value = revealed[`${environment.slug}\u0000${key}`];
                  if (!keysByEnvironment.get(environment.slug)?.has(key)) {
                    return (
                      <td key={environment.slug} className="missing">
                        missing
                      </td>
                    );
                  }
                  return (
                    <td key={environment.slug}>
                      {value === undefined ? (
                        <button type="button" onClick={() => void reveal(environment.slug, key)} aria-label={`Reveal ${key} in ${environment.name}`}>
                          Reveal
                        </button>
                      ) : (
                        <code className="revealed">{value}</code>
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
