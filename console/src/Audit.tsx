import { field } from './form-field.ts';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, type AuditEntry, type Project } from './api.ts';
import { describeFailure } from './resource.tsx';

const USER_AGENT_TYPES = ['web', 'cli', 'k8-operator', 'terraform', 'other', 'InfisicalNodeSDK', 'InfisicalPythonSDK'];

const ACTOR_TYPES = ['user', 'identity', 'service', 'unknownUser'];
/** Export follows the pages up to this many entries. */
const EXPORT_MAX = 10_000;

type Filters = Record<string, string | undefined>;
type Page = { auditLogs: AuditEntry[]; nextCursor?: string };

/** Where the entries come from: one project's log, or the organization's (which also filters by project and kind of actor). */
export interface AuditSource {
  title: string;
  path: string;
  fileName: string;
  projects?: Project[];
}

function actorName(entry: AuditEntry): string {
  const metadata = entry.actor.metadata as { email?: string; name?: string } | null;
  return metadata?.email ?? metadata?.name ?? entry.actor.type;
}

/** An audit log, filtered by the API, a page at a time; the export downloads every matching entry as JSON. */
export function Audit({ source }: { source: AuditSource }) {
  const [filters, setFilters] = useState<Filters>({});
  const [entries, setEntries] = useState<AuditEntry[]>();
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<string>();

  const page = useCallback((after?: string, limit = 100) => api<Page>('GET', source.path, { query: { ...filters, limit, cursor: after } }), [source.path, filters]);
  const more = useCallback(
    async (after?: string) => {
      try {
        const answer = await page(after);
        setEntries((shown) => (after ? [...(shown ?? []), ...answer.auditLogs] : answer.auditLogs));
        setCursor(answer.nextCursor);
        setError(undefined);
      } catch (failure) {
        setError(describeFailure(failure));
      }
    },
    [page],
  );
  useEffect(() => void more(), [more]);

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => field(form, name).trim() || undefined;
    const date = (name: string) => (text(name) ? new Date(text(name)!).toISOString() : undefined);
    const names = ['eventType', 'userAgentType', 'actor', 'actorType', 'projectId'];
    setFilters({ ...Object.fromEntries(names.map((name) => [name, text(name)])), startDate: date('startDate'), endDate: date('endDate') });
  }

  async function exportJson() {
    try {
      const all: AuditEntry[] = [];
      let after: string | undefined;
      do {
        const answer = await page(after, 1000);
        all.push(...answer.auditLogs);
        after = answer.nextCursor;
      } while (after && all.length < EXPORT_MAX);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([JSON.stringify(all, null, 2)], { type: 'application/json' }));
      link.download = source.fileName;
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (failure) {
      setError(describeFailure(failure));
    }
  }

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">{source.title}</h1>
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
        {source.projects && (
          <>
            <label>
              Actor kind
              <select name="actorType" defaultValue="">
                <option value="">Any</option>
                {ACTOR_TYPES.map((type) => (
                  <option key={type}>{type}</option>
                ))}
              </select>
            </label>
            <label>
              Project
              <select name="projectId" defaultValue="">
                <option value="">Any</option>
                {source.projects.map((project) => (
                  <option key={project.id} value={project.id}>
                    {project.name}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        <label>
          From
          <input name="startDate" type="datetime-local" />
        </label>
        <label>
          To
          <input name="endDate" type="datetime-local" />
        </label>
        <button type="submit">Filter</button>
        <button type="button" onClick={() => void exportJson()} disabled={!entries?.length}>
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
      {cursor && (
        <button type="button" onClick={() => void more(cursor)}>
          Load older entries
        </button>
      )}
    </section>
  );
}
