/**
 * The long fuzz run: `npm run fuzz -- --requests 50000 --seed 7 [--backend pglite|postgres|both]`.
 * Prints the answers' status counts and every 5xx or error body off the
 * documented shape with the request that got it; exits 1 if there was any.
 * PostgreSQL: a fresh database on TEST_DATABASE_URL's server (default 127.0.0.1:5432).
 */
import { parseArgs } from 'node:util';
import { fuzz, type FuzzFailure } from './fuzz/fuzzer.ts';
import { startFuzzTarget } from './fuzz/target.ts';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '50000' }, seed: { type: 'string', default: '1' }, backend: { type: 'string', default: 'both' } },
});
const requests = Number(values.requests);
const seed = Number(values.seed);
const backends = values.backend === 'both' ? (['pglite', 'postgres'] as const) : [values.backend as 'pglite' | 'postgres'];

function describe(failure: FuzzFailure): string {
  const { request } = failure;
  const payload = request.payload === undefined ? '' : `\n    body: ${request.payload.slice(0, 400)}`;
  return `  ${failure.kind} ${failure.status} ← ${request.method} ${request.url.slice(0, 300)}${payload}\n    answer: ${failure.body.slice(0, 400)}`;
}

let failed = false;
for (const backend of backends) {
  const started = Date.now();
  const { target, close } = await startFuzzTarget(backend);
  try {
    const report = await fuzz(target, {
      seed,
      requests,
      onProgress: (done, partial) =>
        process.stderr.write(`[fuzz ${backend}] ${done} requests, ${partial.failures.length} failures, ${((Date.now() - started) / 1000).toFixed(1)} s\n`),
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const statuses = Object.entries(report.statuses)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    const fivexx = report.failures.filter((failure) => failure.kind === '5xx').length;
    const offShape = report.failures.length - fivexx;
    process.stdout.write(
      `\n${backend}, seed ${seed}: ${report.requests} requests in ${seconds} s\n  statuses: ${statuses}\n  5xx: ${fivexx}, error bodies off the documented shape: ${offShape}\n`,
    );
    const slowest = Object.entries(report.operations)
      .sort(([, a], [, b]) => b.ms - a.ms)
      .slice(0, 5)
      .map(([name, { requests: count, ms }]) => `${name} ${count}× ${(ms / count).toFixed(1)} ms`);
    process.stdout.write(`  most time: ${slowest.join('; ')}\n`);
    const belowEdge = Object.entries(report.refusedByDatabase).sort(([, a], [, b]) => b.count - a.count);
    if (belowEdge.length > 0) process.stdout.write(`  input refused by PostgreSQL, not by the route's rules (422 without details):\n`);
    for (const [name, { count, example }] of belowEdge) {
      process.stdout.write(`    ${name} ${count}×, e.g. ${example.url.slice(0, 200)} ${JSON.stringify(example.payload?.slice(0, 300) ?? '')}\n`);
    }
    for (const failure of report.failures) process.stdout.write(`${describe(failure)}\n`);
    failed ||= report.failures.length > 0;
  } finally {
    await close();
  }
}
process.exit(failed ? 1 : 0);
