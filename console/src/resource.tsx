import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './api.ts';

/** What a failed call tells the user: a refusal by the API's permissions says so plainly. */
export function describeFailure(failure: unknown): string {
  if (failure instanceof ApiError && failure.status === 403) return `Not allowed: ${failure.message}. Ask an admin of this project or organization.`;
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * Reads of one screen overlap (a reload after a write, or a change, while the first read is still out) and may answer
 * in any order: `begin()` at the start of each, and only the last one begun (`isLatest()`) may show what it read.
 */
export function useLatestRead(): () => () => boolean {
  const latest = useRef(0);
  return useCallback(() => {
    const started = ++latest.current;
    return () => started === latest.current;
  }, []);
}

/** One read from the API, kept with its failure; `reload` reads it again. */
export function useResource<T>(load: () => Promise<T>, deps: DependencyList) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const begin = useLatestRead();
  const reload = useCallback(async () => {
    const isLatest = begin();
    try {
      const value = await load();
      if (!isLatest()) return;
      setData(() => value); // a read may answer a function (permissions): never taken as an updater
      setError(undefined);
    } catch (failure) {
      if (isLatest()) setError(describeFailure(failure));
    }
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { data, error, reload };
}

export type Notice = { text: string; error?: boolean } | undefined;

/** Runs a write, then reloads; the outcome becomes the screen's notice (a refusal included). */
export function useWrite(after: () => Promise<void>) {
  const [notice, setNotice] = useState<Notice>();
  const run = useCallback(
    async (what: () => Promise<unknown>, done: string) => {
      try {
        await what();
        setNotice({ text: done });
        await after();
        return true;
      } catch (failure) {
        setNotice({ text: describeFailure(failure), error: true });
        return false;
      }
    },
    [after],
  );
  return { notice, run };
}

export function NoticeLine({ notice }: { notice: Notice }) {
  if (!notice) return null;
  return (
    <p role={notice.error ? 'alert' : 'status'} className={notice.error ? 'error' : 'notice'}>
      {notice.text}
    </p>
  );
}

/** A button for a write that cannot be undone: it asks first. */
export function Confirmed({ label, question, text, onConfirm }: { label: string; question: string; text: string; onConfirm: () => Promise<unknown> }) {
  return (
    <button type="button" aria-label={label} onClick={() => confirm(question) && void onConfirm()}>
      {text}
    </button>
  );
}
