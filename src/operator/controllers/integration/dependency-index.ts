import { changeTouches, type ReadPlace } from '../../../changes/read-places.ts';
import type { Change, Revision } from '../../port/coffer-port.ts';
import { formatNamespacedName, type NamespacedName } from '../../runtime/object-key.ts';

export interface IntegrationDependencies {
  projectId: string;
  /** Every place the last sync read: its sources (recursive ones with what lies below), imported and referenced folders. */
  places: readonly ReadPlace[];
}

/** How many routed changes are kept to check newly indexed Integrations against. */
const RECENT_CHANGES = 10_000;
/**
 * Which Integrations a committed change touches: its environment and path
 * (whole segments; below it when recursive), the folders it read through
 * imports and references, and anything that moves or removes those folders.
 */
export class DependencyIndex {
  /** By the Integration's "<namespace>/<name>". */
  readonly #byName = new Map<string, { key: NamespacedName; dependencies: IntegrationDependencies }>();
  /** Project id → names of the Integrations that read it. */
  readonly #byProject = new Map<string, Set<string>>();
  /** The changes routed lately, oldest first: a sync indexed after one of them arrived may have missed it. */
  readonly #recent: Change[] = [];
  /** Changes up to this revision are no longer in #recent. */
  #forgottenUpTo = 0;

  /** Call for every change routed with affected(), in revision order. */
  observe(change: Change): void {
    this.#recent.push(change);
    if (this.#recent.length > RECENT_CHANGES) this.#forgottenUpTo = this.#recent.shift()!.revision;
  }

  /**
   * Indexes what `key` depends on. `readAt`: the newest revision committed before its sync read. True
   * when a change after it that touches `key` was routed before `key` was indexed here: that sync
   * missed it and must run again.
   */
  set(key: NamespacedName, dependencies: IntegrationDependencies, readAt?: Revision): boolean {
    this.delete(key);
    const name = formatNamespacedName(key);
    this.#byName.set(name, { key: { namespace: key.namespace, name: key.name }, dependencies });
    let names = this.#byProject.get(dependencies.projectId);
    if (!names) this.#byProject.set(dependencies.projectId, (names = new Set()));
    names.add(name);
    if (readAt === undefined) return false;
    if (readAt < this.#forgottenUpTo) return true;
    return this.#recent.some((change) => change.revision > readAt && this.#matches(dependencies, change));
  }

  delete(key: NamespacedName): void {
    const name = formatNamespacedName(key);
    const previous = this.#byName.get(name);
    if (!previous) return;
    this.#byName.delete(name);
    this.#byProject.get(previous.dependencies.projectId)?.delete(name);
  }

  get size(): number {
    return this.#byName.size;
  }

  affected(change: Change): NamespacedName[] {
    const entries = [...(this.#byProject.get(change.projectId) ?? [])].map((name) => this.#byName.get(name)!);
    return entries.filter((entry) => this.#matches(entry.dependencies, change)).map((entry) => entry.key);
  }

  #matches(dependencies: IntegrationDependencies, change: Change): boolean {
    return changeTouches(dependencies.projectId, dependencies.places, change);
  }
}
