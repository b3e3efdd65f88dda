import { useCallback, useEffect, useRef, useState } from 'react';
import { type Place, type Project, secretsApi } from './api.ts';
import { writesAt } from './recent-writes.ts';
import { useLatestRead, useResource } from './resource.tsx';
import { navigate, useLocation } from './router.ts';
import { type BarrierAnswer, type Destination, type DestinationKeys, followChanges, whereApi } from './where-api.ts';

/** How long the screen follows one write to the clusters; each wait answers within WAIT_STEP with where each one stands. */
const FOLLOW_MS = 120_000;
const WAIT_STEP = '4s';

const THROUGH: Record<Destination['through'], string> = { source: 'its source', recursive: 'below its source', import: 'through an import' };

/** A write followed to the clusters: the revision it committed, and what it was. */
interface Delivery {
  revision: number;
  what: string;
}

function placeFrom(project: Project, url: URL): Place {
  return {
    projectId: project.id,
    environment: url.searchParams.get('env') ?? project.environments[0]?.slug ?? 'dev',
    secretPath: url.searchParams.get('path') ?? '/',
  };
}

/** The screen's address for a folder, or one secret in it. */
export function whereHref(place: Place, key?: string): string {
  const query = new URLSearchParams({ env: place.environment, path: place.secretPath, ...(key ? { key } : {}) });
  return `/projects/${place.projectId}/where?${query}`;
}

/**
 * Where a folder's secrets (or one of them, picked in the Key list) go: the Integrations in every cluster whose Secret
 * holds them and the workloads that read them there, followed live through the project's change stream, and each
 * write at the folder followed to every cluster (the revision barrier), with the reason of any that fails. No value
 * is read here (the key list comes from the folder's masked listing).
 */
export function Where({ project }: { project: Project }) {
  const url = useLocation();
  const place = placeFrom(project, url);
  const key = url.searchParams.get('key') || undefined;
  const placeKey = `${place.environment}\u0000${place.secretPath}`;
  const [destinations, setDestinations] = useState<{ integrations: Destination[]; truncated: boolean }>();
  const [error, setError] = useState<string>();
  const [live, setLive] = useState(false);
  const [deliveries, setDeliveries] = useState<Delivery[]>(() => ownDeliveries(place));
  const keys = useResource(async () => (await secretsApi.list(place)).map((secret) => secret.secretKey), [placeKey]);

  const begin = useLatestRead();
  const load = useCallback(async () => {
    const isLatest = begin();
    try {
      const loaded = await whereApi.destinations(place, key);
      if (!isLatest()) return;
      setDestinations(loaded);
      setError(undefined);
    } catch (failure) {
      if (isLatest()) setError((failure as Error).message);
    }
  }, [placeKey, key]);
  // the stream follows the folder; a change reloads whatever is picked then
  const latestLoad = useRef(load);
  latestLoad.current = load;

  useEffect(() => {
    setDestinations(undefined);
    void load();
  }, [load]);

  useEffect(() => {
    setDeliveries(ownDeliveries(place));
    const stop = new AbortController();
    void followChanges(
      project.id,
      {
        ready: () => setLive(true),
        change: (change) => {
          void latestLoad.current();
          if (change.environment !== place.environment || change.secretPath !== place.secretPath || change.kind === 'integration') return;
          setDeliveries((current) =>
            current.some((delivery) => delivery.revision === change.revision)
              ? current
              : [...current, { revision: change.revision, what: `A change (${change.kind}) at this folder` }],
          );
        },
      },
      stop.signal,
    ).finally(() => setLive(false));
    return () => stop.abort();
  }, [project.id, placeKey]);

  const where = `${place.environment}:${place.secretPath}`;
  return (
    <section aria-labelledby="where-title">
      <h1 id="where-title">
        {project.name}: where {key ? `${key} goes` : `${where} goes`}
      </h1>
      <p>
        {key ? `${key} is in ${where}. These Integrations sync it into a cluster.` : 'These Integrations sync this folder into a cluster.'}{' '}
        <span role="status" className="muted">
          {live ? 'Following changes live.' : 'Connecting to the change stream…'}
        </span>{' '}
        <a
          href={`/projects/${project.id}?env=${encodeURIComponent(place.environment)}&path=${encodeURIComponent(place.secretPath)}`}
          onClick={(event) => (
            event.preventDefault(),
            navigate(`/projects/${project.id}?env=${encodeURIComponent(place.environment)}&path=${encodeURIComponent(place.secretPath)}`)
          )}
        >
          Back to the secrets of {where}
        </a>
      </p>
      <KeyPicker keys={keys.data} picked={key} onPick={(picked) => navigate(whereHref(place, picked))} />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {destinations === undefined && !error && <p>Loading…</p>}
      {destinations?.integrations.length === 0 &&
        (key ? (
          <p className="empty">
            No Integration&apos;s Secret holds {key} of {where}.
          </p>
        ) : (
          <p className="empty">
            No Integration syncs {where} yet. Create an Integration resource in a cluster with this project, environment {place.environment} and path {place.secretPath};
            it appears here as soon as its operator records it.
          </p>
        ))}
      {destinations && destinations.integrations.length > 0 && <DestinationTable destinations={destinations.integrations} where={key ?? where} picked={key} />}
      {destinations?.truncated && <p className="notice">More Integrations sync this folder than are shown.</p>}
      {destinations && destinations.integrations.length > 0 && (
        <>
          <h2>Writes reaching the clusters</h2>
          {deliveries.length === 0 ? (
            <p className="muted">Save a secret in {where} and it is followed here to every cluster.</p>
          ) : (
            [...deliveries]
              .reverse()
              .map((delivery) => <DeliveryProgress key={delivery.revision} delivery={delivery} destinations={destinations.integrations} onProgress={load} />)
          )}
        </>
      )}
    </section>
  );
}

function ownDeliveries(place: Place): Delivery[] {
  return writesAt(place).map((write) => ({ revision: write.revision, what: write.key ? `Your save of ${write.key}` : 'Your change' }));
}

function syncState(destination: Destination): { text: string; failing: boolean } {
  if (!destination.isActive) return { text: 'Paused', failing: false };
  if (destination.isSynced === false) return { text: `Failing: ${destination.syncMessage ?? 'no reason recorded'}`, failing: true };
  if (destination.syncedRevision === null) return { text: 'Not synced yet', failing: false };
  return { text: destination.syncMessage ? `Synced (${destination.syncMessage})` : 'Synced', failing: false };
}

/** The folder's keys to pick from (its own shared secrets, by name), and the whole folder. */
function KeyPicker({ keys, picked, onPick }: { keys: string[] | undefined; picked: string | undefined; onPick: (key: string | undefined) => void }) {
  const names = [...new Set([...(keys ?? []), ...(picked ? [picked] : [])])].sort();
  return (
    <p>
      <label>
        Key
        <select value={picked ?? ''} onChange={(event) => onPick(event.target.value || undefined)}>
          <option value="">The whole folder</option>
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
    </p>
  );
}

/** What the Secret holds of the folder, or of the key picked (by its name there). */
function holds(keys: DestinationKeys | null, picked: string | undefined): { text: string; muted: boolean } {
  if (!keys) return { text: 'Not reported yet by its operator', muted: true };
  const maybe = keys.complete ? '' : 'maybe more: its template makes keys, or its report was cut';
  if (picked) {
    const found = keys.carried.find((carried) => carried.key === picked);
    if (found) return { text: found.as === picked ? 'Holds it' : `Holds it as ${found.as}`, muted: false };
    return { text: `Cannot tell (${maybe})`, muted: true };
  }
  const named = keys.carried.map(({ key, as }) => (as === key ? key : `${key} as ${as}`)).join(', ');
  if (!named) return { text: keys.complete ? 'None of its keys' : `Cannot tell (${maybe})`, muted: true };
  return { text: keys.complete ? named : `${named}; ${maybe}`, muted: false };
}

/** The workloads that read the folder's keys (or the key picked) in the Secret. */
function ReadBy({ keys, picked }: { keys: DestinationKeys | null; picked: string | undefined }) {
  if (!keys) return <span className="muted">—</span>;
  if (!keys.workloads) return <span className="muted">Not reported: its operator does not watch workloads</span>;
  if (keys.workloads.length === 0) return <span className="muted">No workload reads {picked ? 'it' : 'them'}</span>;
  return (
    <ul className="readers">
      {keys.workloads.map((workload) => (
        <li key={`${workload.kind}/${workload.name}`}>
          {workload.kind} {workload.name}
          {picked ? (workload.everyKey ? ' (every key)' : '') : `: ${workload.everyKey ? 'every key' : workload.keys.join(', ')}`}
        </li>
      ))}
      {keys.workloadsTruncated && <li className="muted">and more</li>}
    </ul>
  );
}

function DestinationTable({ destinations, where, picked }: { destinations: Destination[]; where: string; picked: string | undefined }) {
  return (
    <table className="where">
      <caption className="sr-only">Integrations syncing {where}</caption>
      <thead>
        <tr>
          <th scope="col">Integration</th>
          <th scope="col">Cluster</th>
          <th scope="col">Namespace</th>
          <th scope="col">Secret</th>
          <th scope="col">Reads it</th>
          <th scope="col">Synced revision</th>
          <th scope="col">State</th>
          <th scope="col">Holds</th>
          <th scope="col">Read by</th>
          <th scope="col">Reload</th>
        </tr>
      </thead>
      <tbody>
        {destinations.map((destination) => {
          const state = syncState(destination);
          const held = holds(destination.keys, picked);
          return (
            <tr key={destination.id}>
              <th scope="row">{destination.name}</th>
              <td>{destination.cluster}</td>
              <td>{destination.namespace}</td>
              <td>{destination.secretName}</td>
              <td>
                {THROUGH[destination.through]} ({destination.source.environment}:{destination.source.secretPath})
              </td>
              <td>{destination.syncedRevision ?? '—'}</td>
              <td className={state.failing ? 'error' : undefined}>{state.text}</td>
              <td className={held.muted ? 'muted' : undefined}>{held.text}</td>
              <td>
                <ReadBy keys={destination.keys} picked={picked} />
              </td>
              <td>{destination.reloads ? `rolled on a change (reload at revision ${destination.reloadedRevision ?? '—'})` : 'not rolled by Coffer'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

type Reach = { text: string; failing: boolean; done: boolean };

function reachOf(entry: BarrierAnswer['integrations'][number] | undefined, revision: number): Reach {
  if (!entry) return { text: 'Not concerned', failing: false, done: true };
  if (entry.state === 'paused') return { text: 'Paused: not updated', failing: false, done: true };
  if (entry.state === 'reached') return { text: `Reached (at revision ${entry.syncedRevision ?? revision})`, failing: false, done: true };
  if (entry.isSynced === false) return { text: `Failing: ${entry.message ?? 'no reason recorded'}`, failing: true, done: false };
  return { text: 'Waiting for its operator…', failing: false, done: false };
}

/** One write followed to every cluster through the revision barrier, until it reached them all (or for FOLLOW_MS). */
function DeliveryProgress({ delivery, destinations, onProgress }: { delivery: Delivery; destinations: Destination[]; onProgress: () => Promise<void> }) {
  const [answer, setAnswer] = useState<BarrierAnswer>();
  const [error, setError] = useState<string>();
  const [stopped, setStopped] = useState(false);

  useEffect(() => {
    let gone = false;
    const deadline = Date.now() + FOLLOW_MS;
    void (async () => {
      while (!gone) {
        try {
          const next = await whereApi.wait(delivery.revision, WAIT_STEP);
          if (gone) return;
          setAnswer(next);
          void onProgress();
          if (next.reached) return;
        } catch (failure) {
          if (!gone) setError((failure as Error).message);
          return;
        }
        if (Date.now() > deadline) return setStopped(true);
      }
    })();
    return () => {
      gone = true;
    };
  }, [delivery.revision]);

  const entries = new Map(answer?.integrations.map((entry) => [entry.id, entry]));
  const reaches = destinations.map((destination) => ({ destination, reach: reachOf(entries.get(destination.id), delivery.revision) }));
  const failing = reaches.filter(({ reach }) => reach.failing).length;
  const summary = !answer
    ? 'Following it to the clusters…'
    : answer.reached
      ? 'It reached every cluster.'
      : `${reaches.filter(({ reach }) => !reach.done).length} of ${reaches.length} not reached yet${failing ? `, ${failing} failing` : ''}${stopped ? ' (no longer followed)' : ''}.`;
  const title = `${delivery.what}, revision ${delivery.revision}`;
  return (
    <div role="region" aria-label={title} className="delivery">
      <h3>{title}</h3>
      <p role="status">{summary}</p>
      {error && <p role="alert">{error}</p>}
      {answer && (
        <ul>
          {reaches.map(({ destination, reach }) => (
            <li key={destination.id} className={reach.failing ? 'error' : undefined}>
              {destination.cluster} / {destination.namespace} / {destination.name}: {reach.text}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
