import { afterAll, describe, expect, test } from 'vitest';
import { INT4_MAX, INT4_MIN, WELL_FORMED_TEXT } from '../../src/validation/input.ts';
import { BIGINT_FIELDS, constraintsOf, type Field, fieldName, fieldsOf, type JsonSchema, type OpenApiDocument, resolver } from '../support/request-fields.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The input rules hold for every route, including one added tomorrow: every
 * string a request carries (path and query parameters, body fields at any
 * depth, record keys and values) states a maximum length and a pattern that
 * refuses NUL and unpaired surrogates, every integer a range inside the
 * 32-bit columns, every number a range. Route schemas get these by building
 * their fields from src/validation/input.ts; one built from a bare
 * `z.string()` or `z.number()` fails here. (test/api/hostile-input.test.ts
 * sends each field what its rules refuse.)
 */

/** Fields stored encrypted, as bytes: they keep NUL (and refuse only unpaired surrogates). */
const ENCRYPTED_FIELDS = new Set(['secretValue', 'secretComment']);

const app: TestApp = await startTestApp();
afterAll(async () => app?.close());

const document = (await app.request<OpenApiDocument>('GET', '/api/docs/openapi.json')).body;
const resolve = resolver(document);
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
);

function refuses(patterns: string[], value: string): boolean {
  return patterns.some((pattern) => !new RegExp(pattern).test(value)) && patterns.some((pattern) => !new RegExp(pattern, 'u').test(value));
}

/** What is wrong with one field's rules, if anything. */
function problemsOf(field: Field): string[] {
  const { schema } = field;
  if (field.kind === 'integer' || field.kind === 'number') {
    const { minimum, maximum } = schema;
    if (typeof minimum !== 'number' || typeof maximum !== 'number') return [`${field.kind} without a range: [${minimum}, ${maximum}]`];
    if (field.kind === 'integer' && !BIGINT_FIELDS.has(fieldName(field)) && (minimum < INT4_MIN || maximum > INT4_MAX))
      return [`integer range [${minimum}, ${maximum}] past the 32-bit columns`];
    return [];
  }
  if (schema.const !== undefined || Array.isArray(schema.enum)) return [];
  const constraints = constraintsOf(schema, resolve);
  const problems: string[] = [];
  if (!constraints.some((part) => typeof part.maxLength === 'number')) problems.push('string without maxLength');
  const patterns = constraints.map((part) => part.pattern).filter((pattern): pattern is string => typeof pattern === 'string');
  if (!refuses(patterns, 'a\uD800b') || !refuses(patterns, 'a\uDC00b') || !refuses(patterns, '\uDFFF')) problems.push('string that may hold an unpaired surrogate');
  const name = field.steps.at(-1);
  if (typeof name === 'string' && ENCRYPTED_FIELDS.has(name)) {
    if (!patterns.includes(WELL_FORMED_TEXT.source)) problems.push('encrypted text without the well-formed-text rule');
  } else if (!refuses(patterns, 'a\u0000b')) {
    problems.push('string that may hold NUL');
  }
  return problems;
}

describe('every route states the input rules', () => {
  test('every route is in the API reference, its path parameters with schemas', () => {
    const documented = new Map(operations.map(({ key, operation }) => [key, operation]));
    const missing: string[] = [];
    for (const route of app.app.registeredRoutes) {
      const key = `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`;
      const operation = documented.get(key);
      if (!operation) {
        // only the reference's own pages, which read no input, are left out of it
        const schema = (route.schema ?? {}) as Record<string, unknown>;
        if (schema.hide !== true || schema.params || schema.querystring || schema.body) missing.push(key);
        continue;
      }
      for (const [, name] of route.url.matchAll(/:(\w+)/g)) {
        const parameter = operation.parameters?.find((candidate) => candidate.in === 'path' && candidate.name === name);
        if (!parameter?.schema || Object.keys(parameter.schema).length === 0) missing.push(`${key}: path parameter ${name} without a schema`);
      }
    }
    expect(missing).toEqual([]);
    expect(operations.length).toBeGreaterThan(100);
  });

  test.each(operations)('$key', ({ operation }) => {
    const problems = fieldsOf(operation, resolve).flatMap((field) => problemsOf(field).map((problem) => `${fieldName(field)}: ${problem}`));
    expect(problems).toEqual([]);
  });
});

describe('the check itself', () => {
  const field = (schema: JsonSchema, kind: Field['kind'], name = 'name'): Field => ({ place: 'body', steps: [name], schema, kind, chain: [], unionDepths: [] });

  test('fails a bare string, a string without a length, an unbounded or too wide integer', () => {
    expect(problemsOf(field({ type: 'string' }, 'string'))).toEqual([
      'string without maxLength',
      'string that may hold an unpaired surrogate',
      'string that may hold NUL',
    ]);
    expect(problemsOf(field({ type: 'string', pattern: '^[a-z]+$' }, 'string'))).toEqual(['string without maxLength']);
    expect(problemsOf(field({ type: 'string', maxLength: 10, pattern: '^[^\\u0000]*$' }, 'string'))).toEqual(['string that may hold an unpaired surrogate']);
    expect(problemsOf(field({ type: 'integer', minimum: 0 }, 'integer'))).toHaveLength(1);
    expect(problemsOf(field({ type: 'integer', minimum: 0, maximum: 2 ** 31 }, 'integer'))).toHaveLength(1);
    expect(problemsOf(field({ type: 'number', minimum: 0 }, 'number'))).toHaveLength(1);
  });

  test('lets NUL through only where values are stored encrypted', () => {
    const wellFormed = { type: 'string', maxLength: 10, pattern: WELL_FORMED_TEXT.source };
    expect(problemsOf(field(wellFormed, 'string', 'secretValue'))).toEqual([]);
    expect(problemsOf(field(wellFormed, 'string', 'name'))).toEqual(['string that may hold NUL']);
  });
});
