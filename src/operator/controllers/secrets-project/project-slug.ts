import slugify from '@sindresorhus/slugify';
import { createHash } from 'node:crypto';

/** The slug of a SecretsProject without spec.slug: from its namespace and name, 5 to 36 characters. */
export function defaultProjectSlug(namespace: string, name: string): string {
  const base = slugify(`${namespace}-${name}`);
  if (base.length > 36) return `${base.slice(0, 29).replace(/-+$/, '')}-${createHash('sha256').update(base).digest('hex').slice(0, 6)}`;
  return base.length >= 5 ? base : `${base}-project`;
}
