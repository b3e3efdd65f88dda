import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data directory (a tarball) that each test file's in-memory database starts from. */
    pgliteTemplate: string;
  }
}

/**
 * Once per run: a migrated PGlite database, dumped to a file. Creating an empty
 * PGlite database takes seconds (its initdb); starting one from this dump takes
 * a fraction of that, once per test file.
 */
export default async function setup(project: TestProject) {
  const directory = mkdtempSync(join(tmpdir(), 'coffer-pglite-template-'));
  const database = await openDatabase({ dataDir: 'memory://' });
  await migrate(database);
  const path = join(directory, 'migrated.tar');
  writeFileSync(path, Buffer.from(await (await database.dumpDataDir!()).arrayBuffer()));
  await database.close();
  project.provide('pgliteTemplate', path);
  return () => rmSync(directory, { recursive: true, force: true });
}
