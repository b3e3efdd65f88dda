import type { ChangeRecord } from '../changes/change-feed.ts';

export interface IntegrationDependencies {
  projectId: string;
  environmentId: string;
  path: string;
  recursive: boolean;
  /** "<environment id>:<path>" of every folder the last sync read: its own, imported ones, referenced ones. */
  reads: Set<string>;
}

/** How many routed changes are kept to check newly indexed Integrations against. */
const RECENT_CHANGES = 10_000;

function isWithin(path: string, ancestor: string): boolean {
  return ancestor === '/' || path === ancestor || path.startsWith(`${ancestor}/`);
}

/**
 * Which Integrations a committed change touches: its environment and path
 * (whole segments; below it when recursive), the folders it read through
 * imports and references, and anything that moves or removes those folders.
 */
export class DependencyIndex {
  readonly #byKey = new Map<string, IntegrationDependencies>();
  readonly #byProject = new Map<string, Set<string>>();
  /** The changes routed lately, oldest first: a sync indexed after one of them arrived may have missed it. */
  readonly #recent: ChangeRecord[] = [];
  /** Changes up to this revision are no longer in #recent. */
  #forgottenUpTo = 0;

  /** Call for every change routed with affected(), in revision order. */
  observe(change: ChangeRecord): void {
    this.#recent.push(change);
    if (this.#recent.length > RECENT_CHANGES) this.#forgottenUpTo = this.#recent.shift()!.revision;
  }

  /**
   * Indexes what `key` depends on. `readAt`: the newest revision committed before its sync read. True
   * when a change after it that touches `key` was routed before `key` was indexed here: that sync
   * missed it and must run again.
   */
  set(key: string, dependencies: IntegrationDependencies, readAt?: number): boolean {
    this.delete(key);
    this.#byKey.set(key, dependencies);
    let keys = this.#byProject.get(dependencies.projectId);
    if (!keys) this.#byProject.set(dependencies.projectId, (keys = new Set()));
    keys.add(key);
    if (readAt === undefined) return false;
    if (readAt < this.#forgottenUpTo) return true;
    return this.#recent.some((change) => change.revision > readAt && this.#matches(dependencies, change));
  }

  delete(key: string): void {
    const previous = this.#byKey.get(key);
    if (!previous) return;
    this.#byKey.delete(key);
    this.#byProject.get(previous.projectId)?.delete(key);
  }

  get size(): number {
    return this.#byKey.size;
  }

  affected(change: ChangeRecord): string[] {
    const keys = [...(this.#byProject.get(change.projectId) ?? [])];
    return keys.filter((key) => this.#matches(this.#byKey.get(key)!, change));
  }

  #matches(dependencies: IntegrationDependencies, change: ChangeRecord): boolean {
    if (dependencies.projectId !== change.projectId) return false;
    if (change.environmentId === null || change.secretPath === null || change.kind.startsWith('environment') || change.kind === 'project-deleted') {
      return change.environmentId === null || this.#usesEnvironment(dependencies, change.environmentId);
    }
    return this.#touches(dependencies, change);
  }

  #usesEnvironment(dependencies: IntegrationDependencies, environmentId: string): boolean {
    return dependencies.environmentId === environmentId || [...dependencies.reads].some((read) => read.startsWith(`${environmentId}:`));
  }

  #touches(dependencies: IntegrationDependencies, change: ChangeRecord): boolean {
    const environmentId = change.environmentId!;
    const path = change.secretPath!;
    const removesFolders = change.kind === 'folder';
    if (dependencies.environmentId === environmentId) {
      if (path === dependencies.path) return true;
      if (dependencies.recursive && isWithin(path, dependencies.path)) return true;
      if (removesFolders && isWithin(dependencies.path, path)) return true;
    }
    for (const read of dependencies.reads) {
      const separator = read.indexOf(':');
      if (read.slice(0, separator) !== environmentId) continue;
      const readPath = read.slice(separator + 1);
      if (readPath === path || (removesFolders && isWithin(readPath, path))) return true;
    }
    return false;
  }
}
