/**
 * The request fields of the API, read from its OpenAPI document: every path
 * parameter, query parameter and body field (nested ones, array items, the
 * options of a union, record keys and values), each with its JSON Schema,
 * and a way to build a request that changes just one of them.
 *
 * test/api/input-rules.test.ts checks the rules each field states;
 * test/api/hostile-input.test.ts sends every field what those rules refuse.
 */

export type JsonSchema = Record<string, any>;

export interface Parameter {
  in: 'query' | 'path' | 'header';
  name: string;
  example?: unknown;
  required?: boolean;
  schema?: JsonSchema;
}

export interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: JsonSchema; example?: unknown }> };
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Where a field travels, as the 422 body's `details[].in` names it. */
export type FieldPlace = 'params' | 'querystring' | 'headers' | 'body';

/** A step into a value: a property name, the first array item, a property the schema does not name, or a record key itself. */
export type Step = string | 0 | typeof EXTRA_PROPERTY | typeof RECORD_KEY;
export const EXTRA_PROPERTY = Symbol('a property the schema does not name');
export const RECORD_KEY = Symbol('the key of a record entry');

export type FieldKind = 'string' | 'integer' | 'number';

export interface Field {
  place: FieldPlace;
  steps: Step[];
  /** The field's own schema, and the schemas its patterns and bounds come from. */
  schema: JsonSchema;
  kind: FieldKind;
  /** The schema of the value at each depth (index 0: the whole part), the chosen union option where the path crosses one. */
  chain: JsonSchema[];
  /** Depths where the path crosses into one option of a union: the value there is rebuilt from that option. */
  unionDepths: number[];
}

export interface RequestParts {
  params: Record<string, unknown>;
  querystring: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/** The key put into a record for `RECORD_KEY` and `EXTRA_PROPERTY` fields. */
const EXTRA_NAME = 'extra';

export function resolver(document: OpenApiDocument) {
  return (schema: JsonSchema | undefined): JsonSchema => {
    if (schema?.$ref) return document.components?.schemas?.[String(schema.$ref).split('/').pop()!] ?? {};
    return schema ?? {};
  };
}

/** The types a schema allows, `null` aside. */
export function typesOf(schema: JsonSchema): string[] {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  return types.filter((type: string) => type !== 'null');
}

/** A schema's own constraints and those of its `allOf` parts (zod writes several patterns as an `allOf`). */
export function constraintsOf(schema: JsonSchema, resolve = (s: JsonSchema) => s): JsonSchema[] {
  return [schema, ...((schema.allOf ?? []) as JsonSchema[]).map(resolve)];
}

/** Every field of one operation. */
export function fieldsOf(operation: Operation, resolve: (schema: JsonSchema | undefined) => JsonSchema): Field[] {
  const fields: Field[] = [];
  for (const parameter of operation.parameters ?? []) {
    const place: FieldPlace = parameter.in === 'path' ? 'params' : parameter.in === 'header' ? 'headers' : 'querystring';
    const root = { type: 'object', properties: { [parameter.name]: parameter.schema ?? {} } };
    walk(resolve, place, parameter.schema ?? {}, [parameter.name], [root], [], fields);
  }
  const body = operation.requestBody?.content['application/json']?.schema;
  if (body) walk(resolve, 'body', body, [], [], [], fields);
  return fields;
}

const MAX_DEPTH = 12;

function walk(
  resolve: (schema: JsonSchema | undefined) => JsonSchema,
  place: FieldPlace,
  raw: JsonSchema,
  steps: Step[],
  chain: JsonSchema[],
  unionDepths: number[],
  into: Field[],
): void {
  const schema = resolve(raw);
  const here = [...chain.slice(0, steps.length), schema];
  if (steps.length > MAX_DEPTH) return;
  for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])] as JsonSchema[]) {
    const resolved = resolve(option);
    // an option that is the field's own value (a nullable string) changes nothing about the path
    const crosses = typesOf(resolved).some((type) => type === 'object' || type === 'array');
    walk(resolve, place, resolved, steps, here, crosses ? [...unionDepths, steps.length] : unionDepths, into);
  }
  const types = typesOf(schema);
  for (const kind of ['string', 'integer', 'number'] as const) {
    if (types.includes(kind)) into.push({ place, steps, schema, kind, chain: here, unionDepths });
  }
  if (types.includes('object') || schema.properties) {
    for (const [name, property] of Object.entries<JsonSchema>(schema.properties ?? {})) walk(resolve, place, property, [...steps, name], here, unionDepths, into);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      walk(resolve, place, schema.additionalProperties, [...steps, EXTRA_PROPERTY], here, unionDepths, into);
    }
    if (schema.propertyNames) walk(resolve, place, schema.propertyNames, [...steps, RECORD_KEY], here, unionDepths, into);
  }
  if (types.includes('array') && schema.items) walk(resolve, place, schema.items, [...steps, 0], here, unionDepths, into);
}

/** A value the schema describes (its example, default, const or a plain sample); the route may still refuse it for other reasons. */
export function sampleOf(raw: JsonSchema | undefined, resolve: (schema: JsonSchema | undefined) => JsonSchema, depth = 0): unknown {
  const schema = resolve(raw);
  if (schema.const !== undefined) return schema.const;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const options = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].map(resolve).filter((option) => typesOf(option).length > 0 || option.anyOf);
  if (options.length > 0) return sampleOf(options[0], resolve, depth + 1);
  const [type] = typesOf(schema);
  switch (type) {
    case 'object':
      return Object.fromEntries(((schema.required ?? []) as string[]).map((name) => [name, sampleOf(schema.properties?.[name], resolve, depth + 1)]));
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items, resolve, depth + 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'string':
      return sampleString(schema, resolve);
    default:
      return null;
  }
}

function sampleString(schema: JsonSchema, resolve: (schema: JsonSchema | undefined) => JsonSchema): string {
  if (schema.format === 'uuid') return '6f1c2a9e-4b7d-4e21-9a3c-1d5e8f0b7c42';
  if (schema.format === 'date-time') return '2030-01-01T00:00:00Z';
  if (schema.format === 'email') return 'someone@example.com';
  if (schema.format === 'uri') return 'https://example.com/';
  const patterns = constraintsOf(schema, resolve)
    .map((part) => part.pattern)
    .filter(Boolean);
  if (patterns.includes('^-?\\d+$')) return '1';
  return 'sample'.padEnd(schema.minLength ?? 0, 'x');
}

/** A deep copy of `parts` with one field set to `value` (a record key: a property named `value`). */
export function withField(parts: RequestParts, field: Field, value: unknown, resolve: (schema: JsonSchema | undefined) => JsonSchema): RequestParts {
  const copy: RequestParts = structuredClone(parts);
  const root: Record<string, unknown> = { value: copy[field.place] ?? sampleOf(field.chain[0], resolve) };
  // the root itself may be rebuilt from a union option: it is the value of `root.value`
  let container: Record<string | number, unknown> = root;
  let key: string | number = 'value';
  const steps = field.steps;
  for (let depth = 0; depth < steps.length; depth++) {
    let current = container[key];
    if (field.unionDepths.includes(depth) || current === undefined || current === null || typeof current !== 'object') {
      current = sampleOf(field.chain[depth], resolve);
    }
    container[key] = current;
    container = current as Record<string | number, unknown>;
    const step = steps[depth]!;
    if (step === RECORD_KEY) {
      container[String(value)] = sampleOf(field.chain[depth]?.additionalProperties, resolve);
      copy[field.place] = root.value as never;
      return copy;
    }
    key = step === EXTRA_PROPERTY ? EXTRA_NAME : step;
    if (key === 0 && Array.isArray(container) && container.length === 0) container.push(sampleOf(field.chain[depth + 1], resolve));
  }
  container[key] = value;
  copy[field.place] = root.value as never;
  return copy;
}

/** The field's path as the 422 body's `details[].path` names it (`/secrets/0/secretKey`); a record key: the record's path. */
export function detailPath(field: Field): string {
  const named: string[] = [];
  for (const step of field.steps) {
    if (step === RECORD_KEY) break;
    named.push(step === EXTRA_PROPERTY ? EXTRA_NAME : String(step));
  }
  return `/${named.join('/')}`;
}

/**
 * Body fields held in bigint columns: change-log revisions, up to 2^53 (bigInteger in
 * src/validation/input.ts). Every other integer fits the 32-bit columns.
 */
export const BIGINT_FIELDS: ReadonlySet<string> = new Set(['body.syncedRevision', 'body.reloadedRevision', 'body.revision', 'body.fromRevision']);

/** The field's path for people: `body.secrets[].secretKey`, `querystring.limit`. */
export function fieldName(field: Field): string {
  const text = field.steps.map((step) => (step === 0 ? '[]' : step === EXTRA_PROPERTY ? '.*' : step === RECORD_KEY ? '.<key>' : `.${step}`)).join('');
  return `${field.place}${text}`;
}

/** The valid request the document's examples make: path, query and header parameters, and the body. */
export function exampleRequest(operation: Operation): RequestParts {
  const parameters = operation.parameters ?? [];
  const of = (place: Parameter['in']) => Object.fromEntries(parameters.filter((p) => p.in === place && p.example !== undefined).map((p) => [p.name, String(p.example)]));
  return { params: of('path'), querystring: of('query'), headers: of('header'), body: operation.requestBody?.content['application/json']?.example };
}
