import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { fuzz, type FuzzFailure } from './fuzz/fuzzer.ts';
import { fuzzTargetFor } from './fuzz/target.ts';

/**
 * The short fuzz run of `npm test` (both backends): a few thousand seeded
 * requests over the OpenAPI document; `npm run fuzz` runs the long one.
 * FUZZ_SEED and FUZZ_REQUESTS override the seed and the length.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 15000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const describe = (failure: FuzzFailure) =>
  `${failure.kind} ${failure.status} ← ${failure.request.method} ${failure.request.url.slice(0, 200)} ${failure.request.payload?.slice(0, 200) ?? ''} → ${failure.body.slice(0, 200)}`;

test(`${REQUESTS} fuzzed requests (seed ${SEED}): no 5xx, every error in the documented body, no malformed input left for the database to refuse`, async () => {
  const report = await fuzz(await fuzzTargetFor(app.app), { seed: SEED, requests: REQUESTS });
  expect(report.requests).toBe(REQUESTS);
  // the run reached past validation: resources were made and used
  expect(report.statuses[200] ?? 0).toBeGreaterThan(REQUESTS / 20);
  expect(report.failures.map(describe)).toEqual([]);
  // a 422 without details is the database's refusal (a malformed id, say): the route or its store answers first, precisely
  expect(report.refusedByDatabase).toEqual({});
}, 120_000);
