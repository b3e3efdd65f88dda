import { afterAll, expect, test } from 'vitest';
import type { PlannedSource } from '../../../src/operator/controllers/integration/integration-sources.ts';
import { compileKeySelection } from '../../../src/operator/controllers/integration/key-selection.ts';
import { DataHasher, desiredTarget, liveData, isCurrent } from '../../../src/operator/controllers/integration/managed-target.ts';
import { targetDataOf } from '../../../src/operator/controllers/integration/target-data.ts';
import { TemplateRenderer } from '../../../src/operator/controllers/integration/template/template-renderer.ts';
import type { SecretListing } from '../../../src/operator/port/coffer-port.ts';
import type { IntegrationResource } from '../../../src/operator/resources.ts';

/** Names plain-object handling may swallow: Object.prototype's members and the prototype itself. */
const TRICKY = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
];

const renderer = new TemplateRenderer({ workers: 1 });
afterAll(() => renderer.close());

const resource = (template?: IntegrationResource['spec']['target']['template']) =>
  ({ metadata: { name: 'web', namespace: 'shop', uid: 'uid-1' }, spec: { environment: 'dev', target: { name: 'web', template } } }) as IntegrationResource;

const planned: PlannedSource[] = [
  {
    source: { projectId: 'p', environment: 'dev', path: '/', recursive: false, includeImports: true },
    filter: compileKeySelection(undefined, 'keys'),
    declaredAt: 'spec',
  },
];
const listing = (names: readonly string[]): SecretListing => ({
  secrets: names.map((key) => ({ key, value: `value of ${key}`, tags: [], path: '/' })),
  imports: [],
  environmentId: 'env',
  reads: [],
});
/** What the data should hold: every name, `__proto__` as an own key (as JSON.parse makes it). */
const expected = JSON.parse(JSON.stringify(Object.fromEntries(TRICKY.map((key) => [key, `value of ${key}`])))) as Record<string, string>;

/** The record's own entries, sorted: what a spread or toEqual would show, `__proto__` included. */
const entries = (record: Record<string, string>) => Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1));

test('every secret reaches the data: __proto__ and the Object.prototype names are keys like any other', async () => {
  const { data, skipped } = await targetDataOf(resource(), planned, [listing(TRICKY)], renderer);
  expect(entries(data)).toEqual(TRICKY.map((key) => [key, `value of ${key}`]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
  for (const key of TRICKY) expect(Object.hasOwn(data, key), key).toBe(true);
  expect(skipped).toEqual([]);
});

test('through a template (and the worker thread): secrets of those names are variables, and data keys of those names are written', async () => {
  // the spec's data map as the informer gives it (JSON.parse: `__proto__` an own key)
  const templates = JSON.parse(`{${TRICKY.map((key) => `"${key}": "rendered {{ secrets['${key}'] }}"`).join(',')}}`) as Record<string, string>;
  expect(Object.keys(templates)).toEqual(TRICKY);
  const template = { mergePolicy: 'Replace' as const, data: templates };
  const { data, skipped } = await targetDataOf(resource(template), planned, [listing(TRICKY)], renderer);
  expect(entries(data)).toEqual(TRICKY.map((key) => [key, `rendered value of ${key}`]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
  expect(skipped).toEqual([]);
});

test("where each key came from: the secret's folder and name; a key its template made (or replaced) has no origin", async () => {
  const template = { mergePolicy: 'Merge' as const, data: { URL: 'postgres://{{ secrets.USER }}', USER: 'admin' } };
  const { data, origins } = await targetDataOf(resource(template), planned, [listing(['USER', 'HOST'])], renderer);
  expect(Object.keys(data).sort()).toEqual(['HOST', 'URL', 'USER']);
  expect(Object.fromEntries(origins)).toEqual({ HOST: { environment: 'dev', path: '/', key: 'HOST' } });
  const plain = await targetDataOf(resource(), planned, [listing(['USER', 'my key'])], renderer);
  // a name left out (not a data key) is in no report either
  expect(Object.fromEntries(plain.origins)).toEqual({ USER: { environment: 'dev', path: '/', key: 'USER' } });
});

test('the applied Secret holds them, and a live Secret that holds them is current', () => {
  const hasher = new DataHasher(Buffer.alloc(32, 7));
  const data = expected;
  const desired = desiredTarget(resource(), data, 1, 'installation', hasher.hash(data));
  expect(Object.keys(desired.data!).sort()).toEqual([...TRICKY].sort());
  // as sent: JSON keeps every own key
  expect(Object.keys(JSON.parse(JSON.stringify(desired)).data as object).sort()).toEqual([...TRICKY].sort());
  expect(entries(liveData(desired))).toEqual(entries(data));
  expect(isCurrent(structuredClone(desired), desired, 'Owner')).toBe(true);
  // a live Secret without `constructor` is not current (an inherited member never stands in for a key)
  const without = structuredClone(desired);
  without.data = Object.fromEntries(Object.entries(without.data!).filter(([key]) => key !== 'constructor'));
  expect(isCurrent(without, desired, 'Owner')).toBe(false);
});
