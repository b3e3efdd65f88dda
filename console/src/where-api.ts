import { createParser } from 'eventsource-parser';
import { api, type Place } from './api.ts';

/** An Integration resource that syncs a folder (GET /api/v1/workspace/:id/integrations/syncing). */
export interface Destination {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  secretName: string | null;
  source: { environment: string; secretPath: string };
  through: 'source' | 'recursive' | 'import';
  isActive: boolean;
  isSynced: boolean | null;
  syncMessage: string | null;
  syncedRevision: number | null;
  reloads: boolean;
  reloadedRevision: number | null;
  lastSyncTime: string | null;
  /** What its Secret holds of the folder (of the key asked about) and which workloads read it; null before its operator reported it. */
  keys: DestinationKeys | null;
}

/** A Deployment, StatefulSet or DaemonSet reading keys of the folder (by their names in the folder). */
export interface KeyReader {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet';
  name: string;
  keys: string[];
  everyKey: boolean;
}

export interface DestinationKeys {
  carried: { key: string; as: string }[];
  /** False: its Secret may hold more of the folder's keys than `carried` says. */
  complete: boolean;
  /** Null when its operator does not report workloads. */
  workloads: KeyReader[] | null;
  workloadsTruncated: boolean;
}

/** The revision barrier's answer (GET /api/v1/changes/wait). */
export interface BarrierAnswer {
  revision: number;
  reached: boolean;
  integrations: { id: string; state: 'reached' | 'pending' | 'paused'; isSynced: boolean | null; message: string | null; syncedRevision: number | null }[];
}

/** One change of the project's change stream: a place and a revision, never a key or a value. */
export interface ChangeEvent {
  revision: number;
  kind: string;
  environment: string | null;
  secretPath: string | null;
}

export const whereApi = {
  /** With `key`: only the Integrations whose Secret may hold that key of the folder. */
  destinations: (place: Place, key?: string) =>
    api<{ integrations: Destination[]; truncated: boolean }>('GET', `/api/v1/workspace/${encodeURIComponent(place.projectId)}/integrations/syncing`, {
      query: { environment: place.environment, secretPath: place.secretPath, key },
    }),
  /** Answers when the write reached every Integration it concerns, or after `timeout` with where each stands. */
  wait: (revision: number, timeout: string) => api<BarrierAnswer>('GET', '/api/v1/changes/wait', { query: { revision, timeout } }),
};

const RECONNECT_MS = 2_000;

/**
 * Follows the project's change stream until `signal` aborts, resuming after the last revision on a reconnect.
 * Through fetch, not EventSource: every request with the console's cookie must carry its header.
 */
export async function followChanges(projectId: string, on: { ready: () => void; change: (change: ChangeEvent) => void }, signal: AbortSignal): Promise<void> {
  let since: string | undefined;
  while (!signal.aborted) {
    try {
      const query = new URLSearchParams({ projectId, ...(since ? { since } : {}) });
      const response = await fetch(`/api/v1/changes/stream?${query}`, {
        headers: { 'x-coffer-console': '1', accept: 'text/event-stream' },
        credentials: 'same-origin',
        signal,
      });
      if (!response.ok || !response.body) return;
      const parser = createParser({
        onEvent(event) {
          if (event.id) since = event.id;
          if (event.event === 'ready') on.ready();
          if (event.event === 'change') on.change(JSON.parse(event.data) as ChangeEvent);
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) parser.feed(chunk.value);
    } catch {
      if (signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}
