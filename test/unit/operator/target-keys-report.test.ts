import { expect, test } from 'vitest';
import { CARRIED_KEYS_MAX } from '../../../src/integrations/target-keys.ts';
import { targetKeysReport } from '../../../src/operator/controllers/integration/target-keys-report.ts';
import type { KeyOrigin } from '../../../src/operator/controllers/integration/source-merge.ts';

const origin = (environment: string, path: string, key: string): KeyOrigin => ({ environment, path, key });

test('keys grouped by folder in a fixed order, renamed ones with their name in the target, template-made ones counted; no value', () => {
  const data = { URL: 'postgres://secret-value', TOKEN: 'secret-value', DB: 'secret-value', LOG: 'secret-value' };
  const origins = new Map([
    ['TOKEN', origin('prod', '/', 'APP_TOKEN')],
    ['LOG', origin('dev', '/shared', 'LOG')],
    ['DB', origin('dev', '/', 'DB')],
  ]);
  const readers = { readers: [{ kind: 'Deployment' as const, namespace: 'shop', name: 'api', keys: ['DB'] }], truncated: false };
  const report = targetKeysReport(data, origins, readers);
  expect(report).toEqual({
    carried: [
      { environment: 'dev', path: '/', keys: [{ key: 'DB' }] },
      { environment: 'dev', path: '/shared', keys: [{ key: 'LOG' }] },
      { environment: 'prod', path: '/', keys: [{ key: 'APP_TOKEN', as: 'TOKEN' }] },
    ],
    templated: 1,
    carriedTruncated: false,
    readers: readers.readers,
    readersTruncated: false,
  });
  expect(JSON.stringify(report)).not.toContain('secret-value');
  // the same target, its origins found in another order: the same report (nothing is stored again)
  expect(targetKeysReport(data, new Map([...origins].reverse()), readers)).toEqual(report);
});

test(`at most ${CARRIED_KEYS_MAX} keys, then carriedTruncated; without workload watches, readers null`, () => {
  const names = Array.from({ length: CARRIED_KEYS_MAX + 1 }, (_, index) => `KEY_${String(index).padStart(4, '0')}`);
  const report = targetKeysReport(Object.fromEntries(names.map((name) => [name, 'v'])), new Map(names.map((name) => [name, origin('dev', '/', name)])), undefined);
  expect(report.carried.flatMap((folder) => folder.keys)).toHaveLength(CARRIED_KEYS_MAX);
  expect(report).toMatchObject({ templated: 0, carriedTruncated: true, readers: null, readersTruncated: false });
});
