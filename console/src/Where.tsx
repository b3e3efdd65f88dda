import { useCallback, useEffect, useState } from 'react';
import type { Place, Project } from './api.ts';
import { writesAt } from './recent-writes.ts';
import { useLatestRead } from './resource.tsx';
import { navigate, useLocation } from './router.ts';
import { type BarrierAnswer, type Destination, followChanges, whereApi } from './where-api.ts';

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
 * Where a folder's secrets (or one of them) go: the Integrations in every cluster that sync it, followed live through
 * the project's change stream, and each write at the folder followed to every cluster (the revision barrier), with
 * the reason of any that fails. No value is read here.
 */
export function Where({ project }: { project: Project }) {
  const url = useLocation();
  const place = placeFrom(project, url);
  const key = url.searchParams.get('key') ?? undefined;
  const placeKey = `${place.environment}\u0000${place.secretPath}`;
  const [destinations, setDestinations] = useState<{ integrations: Destination[]; truncated: boolean }>();
  const [error, setError] = useState<string>();
  const [live, setLive] = useState(false);
  const [deliveries, setDeliveries] = useState<Delivery[]>(() => ownDeliveries(place));

  const begin = useLatestRead();
  const load = useCallback(async () => {
    const isLatest = begin();
    try {
      const loaded = await whereApi.destinations(place);
      if (!isLatest()) return;
      setDestinations(loaded);
      setError(undefined);
    } catch (failure) {
      if (isLatest()) setError((failure as Error).message);
    }
  }, [placeKey]);

  useEffect(() => {
    setDestinations(undefined);
    setDeliveries(ownDeliveries(place));
    void load();
    const stop = new AbortController();
    void followChanges(
      project.id,
      {
        ready: () => setLive(true),
        change: (change) => {
          void load();
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
  }, [load]);

  const where = `${place.environment}:${place.secretPath}`;
  return (
    <section aria-labelledby="where-title">
      <h1 id="where-title">
        {project.name}: where {key ? `${key} goes` : `${where} goes`}
      </h1>
      <p>
        {key ? `${key} is in ${where}. ` : ''}These Integrations sync {key ? 'its folder' : 'this folder'} into a cluster.{' '}
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
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {destinations === undefined && !error && <p>Loading…</p>}
      {destinations?.integrations.length === 0 && (
        <p className="empty">
          No Integration syncs {where} yet. Create an Integration resource in a cluster with this project, environment {place.environment} and path {place.secretPath}; it
          appears here as soon as its operator records it.
        </p>
      )}
      {destinations && destinations.integrations.length > 0 && <DestinationTable destinations={destinations.integrations} where={where} />}
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

function DestinationTable({ destinations, where }: { destinations: Destination[]; where: string }) {
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
          <th scope="col">Workloads</th>
        </tr>
      </thead>
      <tbody>
        {destinations.map((destination) => {
          const state = syncState(destination);
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
