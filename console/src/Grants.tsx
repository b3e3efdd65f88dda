import type { FormEvent } from 'react';
import { type Can, grantsApi } from './access-api.ts';
import type { Project } from './api.ts';
import { field } from './form-field.ts';
import { Confirmed, NoticeLine, useResource, useWrite } from './resource.tsx';

/** The Kubernetes namespaces that may use the project (its SecretsProject, Integrations and SecretImports there). */
export function Grants({ project, can }: { project: Project; can: Can }) {
  const grants = useResource(() => grantsApi.list(project.id), [project.id]);
  const { notice, run } = useWrite(grants.reload);

  async function grant(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const namespace = field(data, 'namespace').trim();
    const cluster = field(data, 'cluster').trim() || undefined;
    if (await run(() => grantsApi.create(project.id, namespace, cluster), `Granted namespace ${namespace}`)) form.reset();
  }

  return (
    <>
      <NoticeLine notice={notice} />
      {grants.error && <p role="alert">{grants.error}</p>}
      {grants.data?.length === 0 && <p className="empty">No namespace may use this project yet. Grant one below so its SecretsProject and Integrations can sync.</p>}
      {grants.data && grants.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              <th scope="col">Cluster</th>
              <th scope="col">Granted by</th>
              <th scope="col">Since</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {grants.data.map((entry) => (
              <tr key={entry.id}>
                <th scope="row">{entry.namespace}</th>
                <td>{entry.cluster}</td>
                <td>{entry.origin === 'created' ? 'its SecretsProject created the project' : entry.grantedBy.name}</td>
                <td>{new Date(entry.createdAt).toLocaleString()}</td>
                <td>
                  {can('delete', 'namespace-grants') && (
                    <Confirmed
                      label={`Revoke ${entry.cluster}/${entry.namespace}`}
                      question={`Revoke ${entry.cluster}/${entry.namespace}? The Secrets synced there for this project are deleted.`}
                      text="Revoke"
                      onConfirm={() => run(() => grantsApi.revoke(project.id, entry.id), `Revoked namespace ${entry.namespace}`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {can('create', 'namespace-grants') && (
        <form onSubmit={grant} className="inline" aria-label="Grant a namespace">
          <label>
            Namespace
            <input name="namespace" required pattern="[a-z0-9]([\-a-z0-9]*[a-z0-9])?" maxLength={63} />
          </label>
          <label>
            Cluster (empty: this server&apos;s)
            <input name="cluster" pattern="[a-z0-9]([\-a-z0-9]*[a-z0-9])?" maxLength={63} />
          </label>
          <button type="submit">Grant namespace</button>
        </form>
      )}
    </>
  );
}
