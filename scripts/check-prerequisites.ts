/**
 * The first step of `npm test`: checks what the suite needs from the machine
 * before anything is built, and fails with one line per missing piece that
 * names it and how to get it. The test setups check the same things again
 * (they are the ones that use them); this only makes a missing one cost
 * seconds instead of a build and a lint.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { postgresProblem } from '../test/support/postgres-server.ts';
import { binDir } from '../test/support/private-postgres.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const MIN_GO_MINOR = 26;

function run(command: string, args: string[]): string | null {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** The control plane is built already, or Go ≥ 1.26 is here to build it. */
function goProblem(): string | null {
  if (run(path.join(ROOT, 'scripts/k8s-testbin.sh'), ['--print-dir']) !== null) return null;
  const version = process.env.GO ? run(process.env.GO, ['version']) : (run('go', ['version']) ?? run('/usr/local/go/bin/go', ['version']));
  const minor = Number(/go1\.(\d+)/.exec(version ?? '')?.[1] ?? 0);
  if (minor >= MIN_GO_MINOR) return null;
  const found = version ? `found ${version.trim()}` : process.env.GO ? `GO=${process.env.GO} does not run` : 'no go on PATH or in /usr/local/go/bin';
  return `Go >= 1.${MIN_GO_MINOR} builds the test control plane (${found}): install it from go.dev/dl into /usr/local/go, or set GO=/path/to/go`;
}

function initdbProblem(): string | null {
  try {
    binDir();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function opensslProblem(): string | null {
  return run('openssl', ['version']) === null ? 'openssl makes the test control plane its certificates: apt-get install openssl' : null;
}

/** Debian's chromium for the console's browser tests: scripts/chromium.sh installs it when missing, and says why it could not. */
function chromiumProblem(): string | null {
  try {
    execFileSync('bash', [path.join(ROOT, 'scripts/chromium.sh')], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    return null;
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    return `chromium runs the console's browser tests and could not be installed: ${stderr.split('\n').at(-1) ?? 'scripts/chromium.sh failed'}`;
  }
}

const problems = [await postgresProblem(), goProblem(), initdbProblem(), opensslProblem(), chromiumProblem()].filter((problem) => problem !== null);
for (const problem of problems) console.error(`npm test cannot run: ${problem}`);
process.exit(problems.length === 0 ? 0 : 1);
