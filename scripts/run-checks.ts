/**
 * `npm test`'s checks before the tests: runs the named npm scripts at the same
 * time (each is one mostly single-threaded process: tsc, eslint, prettier),
 * prints each one's output in one piece when it ends, and fails if any failed.
 * On 2 cores, one after another left a core idle for the whole preamble.
 * Usage: node scripts/run-checks.ts typecheck lint format:check
 */
import { spawn } from 'node:child_process';

interface Outcome {
  script: string;
  code: number;
  seconds: number;
  output: string;
}

function runScript(script: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: string[] = [];
    child.stdout.on('data', (chunk) => chunks.push(String(chunk)));
    child.stderr.on('data', (chunk) => chunks.push(String(chunk)));
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      resolve({ script, code: code ?? (signal ? 1 : 0), seconds, output: chunks.join('') });
    });
  });
}

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('usage: node scripts/run-checks.ts <npm script>...');
  process.exit(2);
}
const outcomes = await Promise.all(
  scripts.map(async (script) => {
    const outcome = await runScript(script);
    const verdict = outcome.code === 0 ? 'ok' : `FAILED (exit ${outcome.code})`;
    process.stdout.write(`\n> npm run ${script}: ${verdict} in ${outcome.seconds.toFixed(1)} s\n${outcome.output}`);
    return outcome;
  }),
);
const failed = outcomes.filter((outcome) => outcome.code !== 0).map((outcome) => outcome.script);
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
