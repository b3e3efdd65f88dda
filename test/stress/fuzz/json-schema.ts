import fc from 'fast-check';

/** The subset of JSON Schema (as @fastify/swagger writes it from the zod route schemas) that the fuzzer reads. */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
  $ref?: string;
}

/** Values a hostile client sends where a string belongs: NUL, lone surrogates, huge, path tricks, template syntax. */
export const hostileStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '😀',
  '../..',
  '/../x',
  '%00',
  '%',
  '${A}${B}',
  '${dev.a.b.KEY}',
  "'; DROP TABLE secrets; --",
  '0',
  '-1',
  'true',
  'null',
  '00000000-0000-0000-0000-000000000000',
  'not-a-uuid',
  'x'.repeat(600),
  'y'.repeat(5000),
  '/a'.repeat(40),
  'a/'.repeat(3000),
];

/** Values that are the wrong kind altogether, or numbers past every column. */
export const hostileValues: unknown[] = [null, true, false, 0, -1, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e308, -1e308, [], {}, [null], { a: 1 }];

export const hostile = (): fc.Arbitrary<unknown> =>
  fc.oneof(fc.constantFrom(...hostileStrings), fc.constantFrom(...hostileValues), fc.string({ unit: 'binary', maxLength: 20 }));

/** Resolves `#/components/schemas/x` references against the document. */
export type Resolve = (schema: JsonSchema) => JsonSchema;

/** Arbitraries are immutable: one per schema object (building them, regular expressions above all, costs more than drawing). */
const built = new WeakMap<JsonSchema, fc.Arbitrary<unknown>>();
const hostileArbitrary = hostile();

/** Generates values for `schema`: mostly what it allows (bounded in size), sometimes what it does not. */
export function arbitraryFor(schema: JsonSchema, resolve: Resolve, depth = 0): fc.Arbitrary<unknown> {
  const resolved = resolve(schema);
  let arbitrary = built.get(resolved);
  if (!arbitrary) {
    arbitrary = fc.oneof({ weight: 9, arbitrary: conforming(resolved, resolve, depth) }, { weight: 1, arbitrary: hostileArbitrary });
    built.set(resolved, arbitrary);
  }
  return arbitrary;
}

function conforming(schema: JsonSchema, resolve: Resolve, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices?.length) return fc.oneof(...choices.map((choice) => arbitraryFor(choice, resolve, depth + 1)));
  if (schema.allOf?.length) return arbitraryFor(Object.assign({}, ...schema.allOf.map(resolve)), resolve, depth + 1);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : inferredTypes(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => conforming({ ...schema, type }, resolve, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -1000, -(2 ** 31)), max: Math.min(schema.maximum ?? 100_000, 2 ** 31 - 1) });
    case 'number':
      return fc.oneof(
        fc.integer({ min: Math.max(schema.minimum ?? -1000, -1e6), max: Math.min(schema.maximum ?? 100_000, 1e6) }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      );
    case 'array': {
      if (depth > 4) return fc.constant([]);
      const items = schema.items ? arbitraryFor(schema.items, resolve, depth + 1) : fc.string();
      return fc.array(items, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, Math.max(schema.minItems ?? 0, 4)) });
    }
    case 'object': {
      if (depth > 4) return fc.constant({});
      const properties = schema.properties ?? {};
      const record = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, arbitraryFor(property, resolve, depth + 1)]));
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((name) => name in properties) });
    }
    default:
      return stringFor(schema);
  }
}

function inferredTypes(schema: JsonSchema): string[] {
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return ['string'];
}

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
  // negated classes ([^…]) make fast-check filter characters one by one: slow, so those get plain strings
  if (schema.pattern && !schema.pattern.includes('[^')) {
    try {
      const pattern = new RegExp(schema.pattern);
      return fc.stringMatching(pattern).filter((value) => value.length >= (schema.minLength ?? 0) && value.length <= (schema.maxLength ?? 200));
    } catch {
      // a pattern JavaScript cannot compile: fall through to plain strings
    }
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 24, 24));
  return fc.oneof(
    fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/).filter((value) => value.length >= minLength && value.length <= Math.max(maxLength, 3)),
    fc.string({ minLength, maxLength }),
    fc.string({ unit: 'grapheme', minLength, maxLength }),
  );
}
