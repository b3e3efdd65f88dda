import { expect, test } from 'vitest';
import { compileKeySelection } from '../../../src/operator/controllers/integration/key-selection.ts';
import type { KeySelection } from '../../../src/operator/resources.ts';

const offered = (key: string, tags: string[] = []) => ({ key, value: 'v', tags });
const namesOf = (selection: KeySelection | undefined, secrets: ReturnType<typeof offered>[]) => {
  const filter = compileKeySelection(selection, 'keys');
  return secrets.map((secret) => filter.nameOf(secret));
};

test('no selection: every key under its own name', () => {
  expect(namesOf(undefined, [offered('A'), offered('b.c')])).toEqual(['A', 'b.c']);
});

test('include and exclude by glob on the source name; exclude wins', () => {
  const selection = { include: ['DB_*', 'API_KEY'], exclude: ['*_OLD'] };
  expect(namesOf(selection, [offered('DB_HOST'), offered('DB_PASS_OLD'), offered('API_KEY'), offered('OTHER')])).toEqual(['DB_HOST', undefined, 'API_KEY', undefined]);
});

test('tags: a secret must carry one of `tags` and none of `excludeTags`', () => {
  const selection = { tags: ['backend', 'shared'], excludeTags: ['deprecated'] };
  expect(namesOf(selection, [offered('A', ['backend']), offered('B', ['frontend']), offered('C', ['shared', 'deprecated']), offered('D')])).toEqual([
    'A',
    undefined,
    undefined,
    undefined,
  ]);
  expect(namesOf({ excludeTags: ['x'] }, [offered('A'), offered('B', ['x'])])).toEqual(['A', undefined]);
});

test('renames: strip the prefix, rewrite (every match, groups by number or name), add the prefix, in that order', () => {
  const selection: KeySelection = {
    rename: {
      stripPrefix: 'APP_',
      rewrite: [
        { regex: '^DB_(.*)$', replacement: 'DATABASE_$1' },
        { regex: '(?P<word>[A-Z]+)-', replacement: '${word}_' },
      ],
      addPrefix: 'X_',
    },
  };
  expect(namesOf(selection, [offered('APP_DB_HOST'), offered('DB_PORT'), offered('A-B-C'), offered('OTHER')])).toEqual([
    'X_DATABASE_HOST',
    'X_DATABASE_PORT',
    'X_A_B_C',
    'X_OTHER',
  ]);
});

test('a rename to the empty name leaves the key out', () => {
  expect(namesOf({ rename: { rewrite: [{ regex: '^TMP_.*$', replacement: '' }] } }, [offered('TMP_X'), offered('KEEP')])).toEqual([undefined, 'KEEP']);
});

test.each([
  [{ include: ['[AB'] }, /spec\.keys\.include\[0\]: '\[AB' is not a valid pattern/],
  [{ exclude: ['ok', '{x'] }, /spec\.keys\.exclude\[1\]/],
  [{ rename: { rewrite: [{ regex: '(a)\\1', replacement: 'x' }] } }, /spec\.keys\.rename\.rewrite\[0\]\.regex: .*not a valid pattern/],
  [{ rename: { rewrite: [{ regex: '(?=a)', replacement: 'x' }] } }, /not a valid pattern/],
  [{ rename: { rewrite: [{ regex: '(a)', replacement: '$2' }] } }, /rewrite\[0\]\.replacement: '\$2' names a group the regex does not have \(it has 1\)/],
  [{ rename: { rewrite: [{ regex: '(a)', replacement: '${missing}' }] } }, /'\$\{missing\}' names a group/],
])('a selection that cannot be compiled is an InvalidSpec naming where: %j', (selection, message) => {
  let caught: unknown;
  try {
    compileKeySelection(selection, 'keys');
  } catch (error) {
    caught = error;
  }
  expect(caught).toMatchObject({ reason: 'InvalidSpec' });
  expect((caught as Error).message).toMatch(message);
});
