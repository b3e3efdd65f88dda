import { field } from './form-field.ts';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, type AuditEntry, type Project } from './api.ts';

const USER_AGENT_TYPES = ['web', 'cli', 'k8-operator', 'terraform', 'other', 'InfisicalNodeSDK', 'InfisicalPythonSDK'];

interface Filters {
  eventType?: string;
  userAgentType?: string;
  actor?: string;
  startDate?: string;
  endDate?: string;
}

function actorName(entry: AuditEntry): string {
  const metadata = entry.actor.metadata as { email?: string; name?: string } | null;
  return metadata?.email ?? metadata?.name ?? entry.actor.type;
}

/** The project's audit log, filtered by the API; the page shown can be downloaded as JSON. */
export function Audit({ project }: { project: Project }) {
  const [filters, setFilters] = useState<Filters>({});
  const [entries, setEntries] = useState<AuditEntry[]>();
  const [error, setError] = useState<string>();

  const load = useCallback(async () => {
    try {
      const answer = await api<{ auditLogs: AuditEntry[] }>('GET', `/api/v1/workspace/${project.id}/audit-logs`, { query: { ...filters, limit: 200 } });
      setEntries(answer.auditLogs);
      setError(undefined);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, [project.id, filters]);
  useEffect(() => void load(), [load]);

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => field(form, name).trim() || undefined;
    const date = (name: string) => (text(name) ? new Date(text(name)!).toISOString() : undefined);
    setFilters({ eventType: text('eventType'), userAgentType: text('userAgentType'), actor: text('actor'), startDate: date('startDate'), endDate: date('endDate') });
  }

  function exportJson() {
    const blob = new Blob([JSON.stringify(entries ?? [], null, 2)], { type: 'application/json' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = `audit-${project.slug}.json`;
    link.click();
    URL.revokeObjectURL(link.href);
  }

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">{project.name}: audit log</h1>
      <form onSubmit={apply} className="inline" aria-label="Filter the audit log">
        <label>
          Event type
          <input name="eventType" placeholder="reveal-secret,update-secret" />
        </label>
        <label>
          Client
          <select name="userAgentType" defaultValue="">
            <option value="">Any</option>
            {USER_AGENT_TYPES.map((type) => (
              <option key={type}>{type}</option>
            ))}
          </select>
        </label>
        <label>
          Actor id
          <input name="actor" />
        </label>
        <label>
          From
          <input name="startDate" type="datetime-local" />
        </label>
        <label>
          To
          <input name="endDate" type="datetime-local" />
        </label>
        <button type="submit">Filter</button>
        <button type="button" onClick={exportJson} disabled={!entries?.length}>
          Export JSON
        </button>
      </form>
      {error && <p role="alert">{error}</p>}
      {entries && entries.length === 0 && <p className="empty">No entries match. Change the filters, or make a change to see it here.</p>}
      {entries && entries.length > 0 && (
        <table className="audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Actor</th>
              <th scope="col">Client</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td>{new Date(entry.createdAt).toLocaleString()}</td>
                <td className="event">{entry.event.type}</td>
                <td>{actorName(entry)}</td>
                <td>{entry.userAgentType}</td>
                <td>
                  <code>{JSON.stringify(entry.event.metadata)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
