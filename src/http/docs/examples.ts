import { EXAMPLE_VALUES } from './example-values.ts';

/**
 * Builds an example value for a JSON schema of the OpenAPI document: a
 * schema's own example (`examples`, `example`, `const`, `default`, an `enum`
 * value) first, else the shared example for the field's name
 * (example-values.ts), else one for its format. Plain strings without any of
 * these are reported as missing, so that no example shows a made-up "string".
 */

type JsonSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  examples?: unknown[];
};

/** Request examples leave out optional fields that have no example of their own; answers show every field. */
export type ExampleKind = 'request' | 'response';

export interface Example {
  value: unknown;
  /** Paths (`secret.secretKey`) of the fields no example could be found for. */
  missing: string[];
}

/** Optional request fields left out of a request example when the spelling they alias is in the same object. */
const ALIAS_OF: Record<string, string> = {
  workspaceId: 'projectId',
  workspaceSlug: 'projectId',
  projectSlug: 'projectId',
  include_imports: 'includeImports',
  directory: 'path',
};

const FORMAT_EXAMPLES: Record<string, unknown> = {
  uuid: '3f9c2a51-7d4e-4b8a-9c61-2e5f0a7b1d93',
  'date-time': '2026-03-02T09:30:00.000Z',
  email: 'admin@example.com',
  uri: 'https://coffer.example.com',
};

export function exampleOf(schema: JsonSchema | undefined, kind: ExampleKind = 'response'): Example {
  return exampleAt(schema, { kind, path: '' });
}

interface Place {
  kind: ExampleKind;
  /** Dotted path of the field, for the report of missing examples. */
  path: string;
  name?: string;
  /** The name of the object the field sits in (`event` for an audit entry's `event.type`). */
  parent?: string;
}

function exampleAt(schema: JsonSchema | undefined, place: Place): Example {
  const { path, name, parent } = place;
  if (!schema || typeof schema !== 'object') return { value: undefined, missing: [path || '(body)'] };
  const own = ownExample(schema);
  if (own !== undefined) return { value: own, missing: [] };
  const shared = sharedExample(schema, name, parent);
  if (shared !== undefined) return { value: shared, missing: [] };
  if (Array.isArray(schema.enum)) return { value: schema.enum.find((value) => value !== '' && value !== null) ?? schema.enum[0], missing: [] };
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return withNullFallback(firstComplete(branches.filter((branch) => branch.type !== 'null'), place), branches.some((branch) => branch.type === 'null'));
  if (schema.allOf?.length === 1) return exampleAt(schema.allOf[0], place);
  const nullable = Array.isArray(schema.type) && schema.type.includes('null');
  const type = Array.isArray(schema.type) ? schema.type.find((entry) => entry !== 'null') : schema.type;
  return withNullFallback(typedExample(schema, type, place), nullable);
}

/** Whether a field has an example of its own or a shared one (not one made up from its type). */
function hasGivenExample(schema: JsonSchema, name: string, parent: string | undefined): boolean {
  return ownExample(schema) !== undefined || sharedExample(schema, name, parent) !== undefined || Array.isArray(schema.enum);
}

/** A nullable field without any example is shown as null, which it may honestly be. */
function withNullFallback(example: Example, nullable: boolean): Example {
  return nullable && example.missing.length > 0 ? { value: null, missing: [] } : example;
}

function sharedExample(schema: JsonSchema, name: string | undefined, parent: string | undefined): unknown {
  if (!name) return undefined;
  for (const key of [parent && `${parent}.${name}`, name]) {
    if (!key || !Object.hasOwn(EXAMPLE_VALUES, key)) continue;
    const value = EXAMPLE_VALUES[key];
    if (fitsType(schema, value) && (!Array.isArray(schema.enum) || schema.enum.includes(value))) return value;
  }
  return undefined;
}

function fitsType(schema: JsonSchema, value: unknown): boolean {
  const types = [schema.type, ...(schema.anyOf ?? schema.oneOf ?? []).map((branch) => branch.type)].flat().filter(Boolean) as string[];
  if (types.length === 0) return true;
  const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

function typedExample(schema: JsonSchema, type: string | undefined, place: Place): Example {
  const { path, name } = place;
  switch (type) {
    case 'object':
      return objectExample(schema, place);
    case 'array': {
      const item = exampleAt(schema.items, { kind: place.kind, path: `${path}[]`, name: singular(name), parent: name });
      return { value: item.value === undefined ? [] : [item.value], missing: item.missing };
    }
    case 'string': {
      const format = typeof schema.format === 'string' ? FORMAT_EXAMPLES[schema.format] : undefined;
      return format === undefined ? { value: undefined, missing: [path || name || '(value)'] } : { value: format, missing: [] };
    }
    case 'integer':
    case 'number':
      return { value: typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1, missing: [] };
    case 'boolean':
      return { value: true, missing: [] };
    case 'null':
      return { value: null, missing: [] };
    default:
      return { value: undefined, missing: [path || name || '(value)'] };
  }
}

function ownExample(schema: JsonSchema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  return undefined;
}

function isAliasOfPresent(schema: JsonSchema, key: string): boolean {
  const alias = ALIAS_OF[key];
  return alias !== undefined && Object.hasOwn(schema.properties ?? {}, alias);
}

function firstComplete(branches: JsonSchema[], place: Place): Example {
  const examples = branches.map((branch) => exampleAt(branch, place));
  return examples.find((example) => example.missing.length === 0) ?? examples[0] ?? { value: null, missing: [] };
}

/**
 * Every property that can be shown (in a request, optional ones only when they
 * have an example of their own); a required one that cannot makes the example incomplete.
 */
function objectExample(schema: JsonSchema, place: Place): Example {
  const { path, name, kind } = place;
  const value: Record<string, unknown> = {};
  const missing: string[] = [];
  const required = new Set(schema.required ?? []);
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (kind === 'request' && !required.has(key) && (!hasGivenExample(property, key, name) || isAliasOfPresent(schema, key))) continue;
    const example = exampleAt(property, { kind, path: path ? `${path}.${key}` : key, name: key, parent: name });
    if (example.missing.length === 0 && example.value !== undefined) value[key] = example.value;
    else if (required.has(key)) missing.push(...example.missing);
  }
  if (!schema.properties && typeof schema.additionalProperties === 'object') {
    const entry = exampleAt(schema.additionalProperties, { kind, path: `${path}{}`, parent: name });
    if (entry.value !== undefined && entry.missing.length === 0) value.key = entry.value;
  }
  return { value, missing };
}

function singular(name: string | undefined): string | undefined {
  if (!name) return undefined;
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`;
  return name.endsWith('s') ? name.slice(0, -1) : name;
}
