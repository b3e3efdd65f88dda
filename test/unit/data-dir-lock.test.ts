import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../../src/db/data-dir-lock.ts';

const dirs: string[] = [];
function freshDir() {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-lock-unit-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A lock as another process left it: the lock directory (mtime `ageMs` ago) and its holder file. */
function leaveLock(dir: string, holder: object, ageMs = 0) {
  mkdirSync(join(dir, 'coffer.lock'));
  const when = new Date(Date.now() - ageMs);
  utimesSync(join(dir, 'coffer.lock'), when, when);
  writeFileSync(join(dir, 'coffer.holder.json'), JSON.stringify(holder));
}

const fail = () => {
  throw new Error('lock lost');
};

test('takes a free directory, records who holds it, and frees it again', async () => {
  const dir = freshDir();
  const lock = await lockDataDir(dir, 'serve', fail);
  const recorded = JSON.parse(readFileSync(join(dir, 'coffer.holder.json'), 'utf8'));
  expect(recorded).toMatchObject({ pid: process.pid, host: hostname(), command: 'serve' });
  lock.announce('http://127.0.0.1:8080');
  expect(JSON.parse(readFileSync(join(dir, 'coffer.holder.json'), 'utf8')).api).toBe('http://127.0.0.1:8080');
  await lock.release();
  const again = await lockDataDir(dir, 'migrate', fail);
  await again.release();
});

test('a live holder on another host is respected and named', async () => {
  const dir = freshDir();
  leaveLock(dir, { pid: 4242, host: 'db-host-2', since: '2026-01-02T03:04:05.000Z', command: 'serve' });
  const error = await lockDataDir(dir, 'serve', fail).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(DataDirInUseError);
  expect((error as Error).message).toBe(
    `the data directory ${dir} is in use by coffer serve (pid 4242 on host db-host-2, since 2026-01-02T03:04:05.000Z); two processes on one embedded database would corrupt it`,
  );
});

test('a holder on another host that stopped refreshing its lock is taken over once it is stale', async () => {
  const dir = freshDir();
  leaveLock(dir, { pid: 4242, host: 'db-host-2', since: '2026-01-02T03:04:05.000Z', command: 'serve' }, 60_000);
  const lock = await lockDataDir(dir, 'serve', fail);
  expect(JSON.parse(readFileSync(join(dir, 'coffer.holder.json'), 'utf8')).pid).toBe(process.pid);
  await lock.release();
});

test('a holder of this host whose process is gone (kill -9) is taken over at once', async () => {
  const dir = freshDir();
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
  leaveLock(dir, { pid: Number(gone), host: hostname(), since: new Date().toISOString(), command: 'serve' });
  const lock = await lockDataDir(dir, 'serve', fail);
  await lock.release();
});

test('a holder of this host that still runs is respected', async () => {
  const dir = freshDir();
  leaveLock(dir, { pid: process.ppid, host: hostname(), since: new Date().toISOString(), command: 'bootstrap' });
  await expect(lockDataDir(dir, 'serve', fail)).rejects.toThrow(`in use by coffer bootstrap (pid ${process.ppid} on host ${hostname()}`);
});
