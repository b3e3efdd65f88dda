import { expect, test } from 'vitest';
import { compileGlob } from '../../../src/operator/controllers/integration/glob.ts';

test.each([
  ['DB_*', ['DB_HOST', 'DB_', 'DB_a.b/c'], ['db_HOST', 'XDB_HOST', 'DB']],
  ['*_URL', ['API_URL', '_URL'], ['API_URL_2']],
  ['?_KEY', ['A_KEY'], ['AB_KEY', '_KEY']],
  ['[AB]_*', ['A_1', 'B_2'], ['C_3']],
  ['[!AB]_*', ['C_3'], ['A_1']],
  ['[a-c]x', ['bx'], ['dx']],
  ['{API,WEB}_TOKEN', ['API_TOKEN', 'WEB_TOKEN'], ['DB_TOKEN', 'API,WEB_TOKEN']],
  ['a.b', ['a.b'], ['axb']],
  ['\\*literal', ['*literal'], ['xliteral']],
  ['x+(y)|z$^', ['x+(y)|z$^'], ['xy']],
])('glob %s matches whole names only', (glob, matching, notMatching) => {
  const pattern = compileGlob(glob);
  for (const name of matching) expect(pattern.matches(name), name).toBe(true);
  for (const name of notMatching) expect(pattern.matches(name), name).toBe(false);
});

test('unbalanced classes and braces are refused', () => {
  expect(() => compileGlob('[AB')).toThrow(/without a closing/);
  expect(() => compileGlob('{A,B')).toThrow(/without a closing/);
  expect(() => compileGlob('[z-a]')).toThrow();
});

test('many stars against a long name are answered (RE2): a backtracking regex would not finish within the test timeout', () => {
  expect(compileGlob(`${'*a'.repeat(20)}*b`).matches('a'.repeat(1_000))).toBe(false);
  expect(new RegExp(`^${'.*a'.repeat(3)}.*b$`).test('a'.repeat(50))).toBe(false);
});
