import { type IntegrationRow, listManagedIntegrationsOfProject } from './integration-store.ts';
import type { SyncProgress } from './sync-progress.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** Watched projects are read again this often even without a notification (one may be lost while a connection is re-made). */
const SAFETY_CHECK_MS = 5_000;

/** What a watcher makes of the project's Integrations: done, with its answer, or not yet. */
export type Verdict<T> = { done: true; value: T } | { done: false; value: T };

export interface WatchOptions<T> {
  /** Answers with the last verdict at this time (after one more read). */
  deadline: number;
  /** The client went away: answers at once with the last verdict (or `gone`). */
  signal?: AbortSignal;
  gone: T;
}

interface Watcher {
  /** Reads started before this one joined say nothing about what it waits for. */
  fromRead: number;
  deliver(rows: IntegrationRow[] | Error, read: number): void;
}

/** The watchers of one project, and its one read at a time. */
class ProjectWatch {
  readonly watchers = new Set<Watcher>();
  reads = 0;
  reading = false;
  again = false;
}

/**
 * The revision barrier's waiters, woken by the operators' progress
 * notifications: each notification (and a safety check every few seconds)
 * reads the managed Integrations of each watched project once, for every
 * waiter of that project, whatever their number; a waiter only evaluates the
 * rows in memory. Reads of a project never overlap: notifications that come
 * during one are answered by a single read after it.
 */
export class BarrierWatch {
  readonly #db: ReadOnlyDb;
  readonly #progress: SyncProgress;
  readonly #projects = new Map<string, ProjectWatch>();
  #stopListening: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(db: ReadOnlyDb, progress: SyncProgress) {
    this.#db = db;
    this.#progress = progress;
  }

  /** Projects watched now (for tests and metrics). */
  get watchedProjects(): number {
    return this.#projects.size;
  }

  /** Resolves with the first verdict that is done, or the last one at the deadline or when the client goes. */
  async until<T>(projectId: string, evaluate: (rows: IntegrationRow[]) => Verdict<T>, options: WatchOptions<T>): Promise<T> {
    if (options.signal?.aborted) return options.gone;
    await this.#progress.listen();
    return new Promise<T>((resolve, reject) => {
      const project = this.#join(projectId);
      let last: T | undefined;
      let expired = false;
      const finish = (outcome: () => void) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.#leave(projectId, project, watcher);
        outcome();
      };
      const watcher: Watcher = {
        fromRead: project.reads + 1,
        deliver: (rows, read) => {
          if (read < watcher.fromRead) return;
          if (rows instanceof Error) return finish(() => reject(rows));
          const verdict = evaluate(rows);
          last = verdict.value;
          if (verdict.done || expired) finish(() => resolve(verdict.value));
        },
      };
      const onAbort = () => finish(() => resolve(last ?? options.gone));
      const timer = setTimeout(
        () => {
          // one more read decides: the answer at the deadline is as fresh as a poll's would be
          expired = true;
          watcher.fromRead = project.reads + 1;
          this.#read(projectId, project);
        },
        Math.max(0, options.deadline - Date.now()),
      );
      project.watchers.add(watcher);
      // the signal may have aborted while listening started: an abort event is never sent twice
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#read(projectId, project);
    });
  }

  #join(projectId: string): ProjectWatch {
    let project = this.#projects.get(projectId);
    if (!project) {
      project = new ProjectWatch();
      this.#projects.set(projectId, project);
      this.#start();
    }
    return project;
  }

  #leave(projectId: string, project: ProjectWatch, watcher: Watcher): void {
    project.watchers.delete(watcher);
    if (project.watchers.size > 0 || this.#projects.get(projectId) !== project) return;
    this.#projects.delete(projectId);
    if (this.#projects.size === 0) this.#stop();
  }

  /** Reads the project's Integrations for its watchers; one read at a time, a request during it makes one more. */
  #read(projectId: string, project: ProjectWatch): void {
    if (project.reading) {
      project.again = true;
      return;
    }
    project.reading = true;
    void (async () => {
      do {
        project.again = false;
        const read = ++project.reads;
        const rows = await listManagedIntegrationsOfProject(this.#db, projectId).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
        for (const watcher of [...project.watchers]) watcher.deliver(rows, read);
      } while (project.again && project.watchers.size > 0);
      project.reading = false;
    })();
  }

  #readAll = (): void => {
    for (const [projectId, project] of this.#projects) this.#read(projectId, project);
  };

  #start(): void {
    if (this.#stopListening) return;
    this.#stopListening = this.#progress.onProgress(this.#readAll);
    this.#timer = setInterval(() => {
      void this.#progress.listen();
      this.#readAll();
    }, SAFETY_CHECK_MS);
    this.#timer.unref();
  }

  #stop(): void {
    this.#stopListening?.();
    this.#stopListening = null;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
