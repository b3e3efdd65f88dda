import { expect, test } from 'vitest';
import { defaultProjectSlug } from '../../../src/operator/controllers/secrets-project/project-slug.ts';

test('project slugs from namespace and name fit 5 to 36 characters', () => {
  expect(defaultProjectSlug('shop', 'web')).toBe('shop-web');
  expect(defaultProjectSlug('a', 'b')).toBe('a-b-project');
  const long = defaultProjectSlug('a-very-long-namespace-name-for-tests', 'and-a-long-project-name');
  expect(long.length).toBeLessThanOrEqual(36);
  expect(long).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
});
