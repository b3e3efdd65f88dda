import type { RolloutKind, WorkloadRef } from './workload-rollout.ts';

/** Keys of the target one report says where they came from, at most (the rest: `carriedTruncated`). */
export const CARRIED_KEYS_MAX = 500;
/** Workloads one report names, at most, and keys it names per workload (the rest: `readersTruncated`). */
export const KEY_READERS_MAX = 50;
export const KEYS_PER_READER_MAX = 50;

/** A key of one folder that the target holds: its name in the folder and, when renamed, its name in the target. */
export interface CarriedKey {
  key: string;
  as?: string;
}

/** The keys of one folder (environment slug and path) the target holds. */
export interface CarriedFolder {
  environment: string;
  path: string;
  keys: CarriedKey[];
}

/** A workload whose pod template reads the target: the target's keys it names, or null for every key (envFrom, a volume without items). */
export interface KeyReader extends WorkloadRef {
  keys: string[] | null;
}

/**
 * What an operator reports with a sync of the keys of its Integration's target: where each came from, and which
 * workloads of its namespace read which. Names and kinds only, never a value.
 */
export interface TargetKeys {
  carried: CarriedFolder[];
  /** Keys its template made (no one secret is where they came from). */
  templated: number;
  /** The target holds more keys from secrets than `carried` names. */
  carriedTruncated: boolean;
  /** Null when the operator does not watch workloads (its workload RBAC is not granted). */
  readers: KeyReader[] | null;
  /** More workloads read the target than `readers` names, or one of them names more keys than it lists. */
  readersTruncated: boolean;
}

/** A workload reading keys of one folder, by their names in the folder; `everyKey`: it reads every key of the target (envFrom, a volume without items). */
export interface FolderKeyReader {
  kind: RolloutKind;
  name: string;
  keys: string[];
  everyKey: boolean;
}

/** What one Integration carries of one folder (or of one key of it), and which workloads read it. */
export interface FolderKeys {
  carried: { key: string; as: string }[];
  /** False: the target may hold more of the folder's keys than `carried` says (its template made some, or the report was cut). */
  complete: boolean;
  /** Null when its operator does not report workloads. */
  workloads: FolderKeyReader[] | null;
  workloadsTruncated: boolean;
}

/** The place asked about: a folder, and maybe one of its keys. */
export interface KeyPlace {
  environment: string;
  path: string;
  key?: string;
}

/** What a report says of one folder and key, as the destinations' read finds it (in SQL) or as folderKeysOf does. */
export interface KeyFacts {
  /** The report names the folder among those its keys came from. */
  namesFolder: boolean;
  /** It names the key among the folder's. */
  carriesKey: boolean;
  /** Its template made no key and it was not cut at its cap. */
  complete: boolean;
}

/**
 * Whether what a report names of a folder is all the target holds of it. A folder the Integration reads through an
 * import is covered only when the report names it: the keys an import brings from its own imports are attributed
 * to the import (the listing groups them so), so a folder reached further down is never ruled out.
 */
export function coversFolder(facts: Omit<KeyFacts, 'carriesKey'>, throughImport: boolean): boolean {
  return facts.complete && (!throughImport || facts.namesFolder);
}

/** Whether the target may hold the key: the report names it there, or cannot rule it out. */
export function mayHoldKey(facts: KeyFacts, throughImport: boolean): boolean {
  return facts.carriesKey || !coversFolder(facts, throughImport);
}

/**
 * The part of a report that concerns one folder (or one key of it): the keys the target carries from there and the
 * workloads that read them, each by the folder's names. Nothing of another folder is named, so the answer tells a
 * caller who may read this folder nothing of the others.
 */
export function folderKeysOf(report: TargetKeys, place: KeyPlace, throughImport: boolean): FolderKeys {
  const folders = report.carried.filter((folder) => folder.environment === place.environment && folder.path === place.path);
  const complete = report.templated === 0 && !report.carriedTruncated;
  const carried = folders
    .flatMap((folder) => folder.keys)
    .filter((carriedKey) => place.key === undefined || carriedKey.key === place.key)
    .map(({ key, as }) => ({ key, as: as ?? key }));
  const folderKeyOf = new Map(carried.map(({ key, as }) => [as, key]));
  const workloads = report.readers?.flatMap((reader): FolderKeyReader[] => {
    const names = reader.keys ?? [...folderKeyOf.keys()];
    const keys = [...new Set(names.flatMap((name) => folderKeyOf.get(name) ?? []))].sort();
    return keys.length === 0 ? [] : [{ kind: reader.kind, name: reader.name, keys, everyKey: reader.keys === null }];
  });
  return {
    carried,
    complete: coversFolder({ complete, namesFolder: folders.length > 0 }, throughImport),
    workloads: workloads ?? null,
    workloadsTruncated: report.readersTruncated,
  };
}
