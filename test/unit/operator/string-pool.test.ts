import { describe, expect, it } from 'vitest';
import { shareStrings, StringPool } from '../../../src/operator/runtime/string-pool.ts';

const VALUE_KEYS = new Set(['data', 'stringData', 'binaryData']);

function parsedSecret(name: string, value: string) {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'team-a', labels: { 'app.kubernetes.io/managed-by': 'coffer' }, ownerReferences: [{ kind: 'Integration', name }] },
      data: { API_KEY: value, nested: value },
      stringData: { TOKEN: value },
    }),
  ) as Record<string, unknown>;
}

describe('StringPool', () => {
  it('leaves every object equal to what was parsed', () => {
    const pool = new StringPool();
    const object = parsedSecret('web', 'c2VjcmV0');
    const before = structuredClone(object);
    pool.internObject(object, VALUE_KEYS);
    expect(object).toEqual(before);
    expect(pool.holds('team-a')).toBe(true);
    expect(pool.holds('Integration')).toBe(true);
    expect(pool.holds('coffer')).toBe(true);
  });

  it('never takes in a value under the skipped keys', () => {
    const pool = new StringPool();
    pool.internObject(parsedSecret('web', 'dmFsdWUtb25l'), VALUE_KEYS);
    pool.internObject(parsedSecret('api', 'dmFsdWUtdHdv'), VALUE_KEYS);
    for (const value of ['dmFsdWUtb25l', 'dmFsdWUtdHdv']) expect(pool.holds(value)).toBe(false);
    expect(pool.holds('web')).toBe(true);
  });

  it('stays within its capacity and leaves long strings out', () => {
    const pool = new StringPool(100, 16);
    for (let index = 0; index < 1_000; index++) {
      pool.internObject({ metadata: { uid: `uid-${index}`, namespace: 'team-a' } }, VALUE_KEYS);
      expect(pool.size).toBeLessThanOrEqual(100);
    }
    expect(pool.holds('team-a')).toBe(true);
    expect(pool.intern('a string longer than sixteen')).toBe('a string longer than sixteen');
    expect(pool.holds('a string longer than sixteen')).toBe(false);
  });

  it('keeps a parsed "__proto__" key a plain own key', () => {
    const pool = new StringPool();
    const object = JSON.parse('{"spec":{"template":{"__proto__":{"polluted":"yes"},"name":"x"}}}') as Record<string, unknown>;
    pool.internObject(object, VALUE_KEYS);
    const template = (object.spec as { template: Record<string, unknown> }).template;
    expect(Object.getPrototypeOf(template)).toBe(Object.prototype);
    expect(Object.hasOwn(template, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves nesting deeper than any Kubernetes object as parsed, without overflowing the stack', () => {
    const pool = new StringPool();
    const deep = JSON.parse(`${'{"a":'.repeat(5_000)}"bottom"${'}'.repeat(5_000)}`) as Record<string, unknown>;
    pool.internObject(deep, VALUE_KEYS);
    expect(pool.holds('bottom')).toBe(false);
  });

  it("shares a Secret's metadata, but never its values or its annotations", () => {
    const pool = new StringPool();
    const lastApplied = '{"apiVersion":"v1","data":{"k":"dg=="},"kind":"Secret","metadata":{"name":"s","namespace":"n"}}';
    const secret = parsedSecret('web', 'c2VjcmV0');
    (secret.metadata as Record<string, unknown>).annotations = { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied, note: 'tiny' };
    const before = structuredClone(secret);
    shareStrings(pool, secret);
    expect(secret).toEqual(before);
    for (const value of ['team-a', 'coffer', 'web', 'Integration', 'v1', 'Secret']) expect(pool.holds(value)).toBe(true);
    for (const value of ['c2VjcmV0', lastApplied, 'tiny']) expect(pool.holds(value)).toBe(false);
  });
});
