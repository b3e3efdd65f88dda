/**
 * Whether two statuses say the same, as their JSON says it: a field set to null (removed, in a merge patch) is one
 * that is absent, and the order of an object's keys does not matter; an array's elements compare in order. For plain
 * JSON values (what the apiserver answers and the controllers set): any other object (a Date, a Map) is the same only
 * as itself.
 *
 * Every status write asks this first (an unchanged status is not written). Serialising both to JSON with a replacer
 * and comparing the parsed copies was 3–4% of the operator's busy time on a resync of 10,000 Integrations.
 */
export function sameStatus(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && sameElements(a, b);
  if (!isPlain(a) || !isPlain(b)) return false;
  return sameFields(a as Record<string, unknown>, b as Record<string, unknown>);
}

function sameElements(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  // JSON writes an absent element as null
  for (let index = 0; index < a.length; index++) if (!sameStatus(a[index] ?? null, b[index] ?? null)) return false;
  return true;
}

function sameFields(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  let stated = 0;
  for (const key in a) {
    if (!Object.hasOwn(a, key) || a[key] === null || a[key] === undefined) continue;
    stated++;
    if (!Object.hasOwn(b, key) || !sameStatus(a[key], b[key])) return false;
  }
  for (const key in b) if (Object.hasOwn(b, key) && b[key] !== null && b[key] !== undefined) stated--;
  return stated === 0;
}

function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
