import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Go SDK conformance program, built from test/clients/go-sdk. */
    goSdkProgram: string;
  }
}

const SOURCE = join(import.meta.dirname, 'go-sdk');

/**
 * Builds the Go SDK conformance program (github.com/infisical/go-sdk v0.8.0 from the module
 * proxy) once per source version into ~/.cache/coffer/clients/<hash>/, outside the repo; a
 * later run with the same go.mod, go.sum and Go files reuses it. No Go 1.26 fails the run.
 */
export default function setup(project: TestProject) {
  const go = process.env.GO ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go');
  let version: string;
  try {
    version = execFileSync(go, ['env', 'GOVERSION'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } }).trim();
  } catch {
    throw new Error('The client conformance tier needs Go 1.26 or newer (https://go.dev/dl/, or set GO=/path/to/go): `go` was not found.');
  }
  const [major, minor] = version.replace(/^go/, '').split('.').map(Number);
  if (major! < 1 || (major === 1 && minor! < 26)) throw new Error(`The client conformance tier needs Go 1.26 or newer; found ${version}.`);
  const hash = createHash('sha256');
  const goFiles = readdirSync(SOURCE)
    .filter((file) => file.endsWith('.go'))
    .sort();
  for (const file of ['go.mod', 'go.sum', ...goFiles]) hash.update(file).update(readFileSync(join(SOURCE, file)));
  const dir = join(process.env.COFFER_CLIENTS_CACHE ?? join(homedir(), '.cache/coffer/clients'), hash.digest('hex').slice(0, 16));
  const program = join(dir, 'go-sdk-conformance');
  if (!existsSync(program)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(go, ['build', '-trimpath', '-o', program, '.'], {
      cwd: SOURCE,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0' },
      timeout: 600_000,
    });
  }
  project.provide('goSdkProgram', program);
}
