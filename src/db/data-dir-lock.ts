import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';

/** Who holds an embedded data directory: written beside the lock by its holder. */
export interface DataDirHolder {
  pid: number;
  host: string;
  /** ISO 8601: when the holder took the lock. */
  since: string;
  /** The coffer command holding it (serve, migrate, bootstrap, rotate-key). */
  command: string;
  /** The API address of a serving holder, for commands that can go through it. */
  api?: string;
}

export class DataDirInUseError extends Error {
  readonly dataDir: string;
  readonly holder: DataDirHolder | undefined;

  constructor(dataDir: string, holder: DataDirHolder | undefined) {
    const who = holder
      ? `coffer ${holder.command} (pid ${holder.pid} on host ${holder.host}, since ${holder.since})`
      : 'another coffer process (it has not said which yet)';
    super(`the data directory ${dataDir} is in use by ${who}; two processes on one embedded database would corrupt it`);
    this.dataDir = dataDir;
    this.holder = holder;
  }
}

export interface DataDirLock {
  readonly holder: DataDirHolder;
  /** Records the API address of the serving holder (for `coffer bootstrap` run beside it). */
  announce(api: string): void;
  release(): Promise<void>;
}

/**
 * How long a lock whose holder stopped refreshing it is respected. The holder
 * refreshes the lock's mtime every STALE_MS / 2; a holder on this host that
 * is gone (kill -9) is recognised at once by its pid instead.
 */
const STALE_MS = 10_000;

/**
 * Takes the embedded database's data directory for this process alone, or
 * throws DataDirInUseError naming the holder. The lock is a directory made by
 * proper-lockfile (atomic mkdir, mtime refreshed while held, so a holder on
 * another host that died is taken over after STALE_MS); `coffer.holder.json`
 * beside it says who holds it. A lock left by a process of this host that no
 * longer runs (kill -9, or a container restarted with the same pid) is removed
 * at once. If the lock is ever taken away from a live holder, `onLost` is
 * called: the holder must stop writing.
 */
export async function lockDataDir(dataDir: string, command: string, onLost: (error: Error) => void): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lockPath = join(dir, 'coffer.lock');
  const holderPath = join(dir, 'coffer.holder.json');
  const options = { lockfilePath: lockPath, realpath: false, stale: STALE_MS, onCompromised: onLost };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, options);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED') throw error;
    const holder = readHolder(holderPath);
    if (!holder || !isGoneFromThisHost(holder)) throw new DataDirInUseError(dir, holder);
    rmSync(lockPath, { recursive: true, force: true });
    try {
      release = await lockfile.lock(dir, options);
    } catch (retryError) {
      if ((retryError as { code?: string }).code === 'ELOCKED') throw new DataDirInUseError(dir, readHolder(holderPath));
      throw retryError;
    }
  }
  const holder: DataDirHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), command };
  writeHolder(holderPath, holder);
  return {
    holder,
    announce(api) {
      holder.api = api;
      writeHolder(holderPath, holder);
    },
    async release() {
      rmSync(holderPath, { force: true });
      await release().catch(() => {});
    },
  };
}

/** The holder recorded in `dataDir`, if a lock is held there. */
export function readDataDirHolder(dataDir: string): DataDirHolder | undefined {
  return readHolder(join(resolve(dataDir), 'coffer.holder.json'));
}

function readHolder(path: string): DataDirHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<DataDirHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return undefined;
    return { pid: parsed.pid, host: parsed.host, since: String(parsed.since), command: String(parsed.command), api: parsed.api };
  } catch {
    return undefined;
  }
}

function writeHolder(path: string, holder: DataDirHolder): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** A holder recorded by this host whose process no longer runs (our own pid: a restarted container's pid 1). */
function isGoneFromThisHost(holder: DataDirHolder): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === 'ESRCH';
  }
}
