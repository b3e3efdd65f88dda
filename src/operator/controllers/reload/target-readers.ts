import { isDeepStrictEqual } from 'node:util';
import { KEY_READERS_MAX, KEYS_PER_READER_MAX, type KeyReader } from '../../../integrations/target-keys.ts';
import type { WorkloadKind } from '../../resources.ts';
import type { Workload } from '../../runtime/informers.ts';
import { type ConsumedKeys, consumedKeys, type TargetRef } from './consumed-keys.ts';

/** A workload, by kind and name, in its namespace. */
type ReaderName = `${WorkloadKind}/${string}`;

/**
 * Which workloads read which Secrets and ConfigMaps, and which of their keys, kept from the workload informers'
 * events (every workload: reading needs no opt-in, unlike reload). A change of what a pod template reads is told as
 * the targets it concerns, so only those Integrations report again; a status update of a workload concerns none.
 */
export class TargetReaders {
  /** Per namespace, what each workload reads. */
  readonly #reads = new Map<string, Map<ReaderName, Map<TargetRef, ConsumedKeys>>>();

  /** A workload was added or updated: the targets of its namespace whose readers changed (before or now). */
  seen(kind: WorkloadKind, workload: Workload): TargetRef[] {
    const { namespace, name } = workload.metadata ?? {};
    if (!namespace || !name) return [];
    const now = consumedKeys(workload.spec?.template?.spec);
    const readers = this.#reads.get(namespace) ?? new Map<ReaderName, Map<TargetRef, ConsumedKeys>>();
    const before = readers.get(`${kind}/${name}`) ?? new Map<TargetRef, ConsumedKeys>();
    if (now.size > 0) readers.set(`${kind}/${name}`, now);
    else readers.delete(`${kind}/${name}`);
    this.#keep(namespace, readers);
    return changedTargets(before, now);
  }

  /** A workload was deleted: the targets it read. */
  gone(kind: WorkloadKind, workload: Workload): TargetRef[] {
    const { namespace, name } = workload.metadata ?? {};
    const readers = namespace ? this.#reads.get(namespace) : undefined;
    const before = readers?.get(`${kind}/${name}`);
    if (!readers || !before) return [];
    readers.delete(`${kind}/${name}`);
    this.#keep(namespace!, readers);
    return [...before.keys()];
  }

  /** The workloads of `namespace` that read `target`, by kind and name, at most KEY_READERS_MAX; `truncated` when there were more (or more keys). */
  readersOf(namespace: string, target: TargetRef): { readers: KeyReader[]; truncated: boolean } {
    const readers = this.#reads.get(namespace) ?? new Map<ReaderName, Map<TargetRef, ConsumedKeys>>();
    const found: KeyReader[] = [];
    let truncated = false;
    for (const reader of [...readers.keys()].sort()) {
      const consumed = readers.get(reader)!.get(target);
      if (consumed === undefined) continue;
      const [kind, name] = reader.split('/') as [WorkloadKind, string];
      const keys = consumed === 'all' ? null : [...consumed].sort();
      if (keys && keys.length > KEYS_PER_READER_MAX) truncated = true;
      found.push({ kind, namespace, name, keys: keys?.slice(0, KEYS_PER_READER_MAX) ?? null });
    }
    return { readers: found.slice(0, KEY_READERS_MAX), truncated: truncated || found.length > KEY_READERS_MAX };
  }

  #keep(namespace: string, readers: Map<ReaderName, Map<TargetRef, ConsumedKeys>>): void {
    if (readers.size > 0) this.#reads.set(namespace, readers);
    else this.#reads.delete(namespace);
  }
}

/** The targets read before or now whose keys read differ. */
function changedTargets(before: Map<TargetRef, ConsumedKeys>, now: Map<TargetRef, ConsumedKeys>): TargetRef[] {
  return [...new Set([...before.keys(), ...now.keys()])].filter((target) => !isDeepStrictEqual(before.get(target), now.get(target)));
}
