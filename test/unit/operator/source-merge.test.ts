import { expect, test } from 'vitest';
import { compileKeySelection } from '../../../src/operator/controllers/integration/key-selection.ts';
import { mergeSources, type ReadSource } from '../../../src/operator/controllers/integration/source-merge.ts';
import type { KeySelection } from '../../../src/operator/resources.ts';

const own = (key: string, value: string, path = '/', tags: string[] = []) => ({ key, value, path, tags });
const imported = (environment: string, path: string, secrets: Record<string, string>) => ({
  environment,
  path,
  secrets: Object.entries(secrets).map(([key, value]) => ({ key, value, tags: [] })),
});
const source = (environment: string, listing: ReadSource['listing'], keys?: KeySelection): ReadSource => ({
  environment,
  listing,
  filter: compileKeySelection(keys, 'keys'),
});

test('within a source: own secrets beat imports, the last import wins, nearer folders beat deeper ones; each override with another value is a collision', () => {
  const { values, collisions } = mergeSources([
    source('dev', {
      secrets: [own('A', 'own'), own('DEEP', 'deep', '/x/y'), own('DEEP', 'near', '/x'), own('SAME', 's')],
      imports: [imported('dev', '/one', { A: 'first', B: 'first', C: 'first', SAME: 's' }), imported('stg', '/two', { B: 'second' })],
    }),
  ]);
  expect(Object.fromEntries(values)).toEqual({ A: 'own', B: 'second', C: 'first', DEEP: 'near', SAME: 's' });
  expect(collisions).toEqual([
    { key: 'A', winner: 'dev:/', overridden: ['dev:/one (imported)'] },
    { key: 'B', winner: 'stg:/two (imported)', overridden: ['dev:/one (imported)'] },
    { key: 'DEEP', winner: 'dev:/x', overridden: ['dev:/x/y'] },
  ]);
});

test('sources merge in order, a later source winning; selection and renames apply before the merge, so a key left out hides nothing', () => {
  const { values, collisions } = mergeSources([
    source('dev', { secrets: [own('DB_HOST', 'dev-host'), own('DB_PASS', 'dev-pass', '/', ['legacy']), own('LOG', 'debug')], imports: [] }, { excludeTags: ['legacy'] }),
    source('prod', { secrets: [own('HOST', 'prod-host'), own('LOG', 'info')], imports: [] }, { include: ['HOST'], rename: { addPrefix: 'DB_' } }),
  ]);
  expect(Object.fromEntries(values)).toEqual({ DB_HOST: 'prod-host', LOG: 'debug' });
  expect(collisions).toEqual([{ key: 'DB_HOST', winner: 'prod:/', overridden: ['dev:/'] }]);
});

test('two secrets renamed to one name collide, whichever source they come from', () => {
  const { values, collisions } = mergeSources([source('dev', { secrets: [own('APP_TOKEN', 'a'), own('TOKEN', 'b')], imports: [] }, { rename: { stripPrefix: 'APP_' } })]);
  expect(values.get('TOKEN')).toBe('b');
  expect(collisions).toEqual([{ key: 'TOKEN', winner: 'dev:/', overridden: ['dev:/'] }]);
});

test('names that cannot be data keys still take part (templates may use them)', () => {
  const { values } = mergeSources([source('dev', { secrets: [own('my key', 'x')], imports: [] })]);
  expect(values.get('my key')).toBe('x');
});

test("each name's origin is the secret that won: its folder (an import's own for what it brings) and its name there", () => {
  const { origins } = mergeSources([
    source('dev', { secrets: [own('A', 'own'), own('DEEP', 'near', '/x'), own('DEEP', 'deep', '/x/y')], imports: [imported('stg', '/shared', { A: 'i', B: 'i' })] }),
    source('prod', { secrets: [own('APP_TOKEN', 't')], imports: [] }, { rename: { stripPrefix: 'APP_' } }),
  ]);
  expect(Object.fromEntries(origins)).toEqual({
    A: { environment: 'dev', path: '/', key: 'A' },
    B: { environment: 'stg', path: '/shared', key: 'B' },
    DEEP: { environment: 'dev', path: '/x', key: 'DEEP' },
    TOKEN: { environment: 'prod', path: '/', key: 'APP_TOKEN' },
  });
});
