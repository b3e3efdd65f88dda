import fc from 'fast-check';
import { arbitraryFor, hostile, type JsonSchema, type Resolve } from './json-schema.ts';

/**
 * A seeded, stateful fuzzer over the service's own OpenAPI document: each
 * step picks an operation and draws its path parameters, query and body from
 * the operation's schemas (mostly valid, sometimes hostile), preferring ids,
 * slugs, names and paths that earlier answers created, so that sequences
 * create, use and delete real resources. fast-check draws every value
 * (fc.gen inside one seeded run), so a seed replays the same requests
 * against the same answers.
 *
 * Every answer is checked: no 5xx, and every error in the documented body
 * `{statusCode, message, error, code, reqId}` (+ `details`).
 */

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

export interface FuzzAnswer {
  status: number;
  body: string;
}

export interface FuzzTarget {
  /** The OpenAPI document, as served at /api/docs/openapi.json. */
  openapi: any;
  send(request: FuzzRequest): Promise<FuzzAnswer>;
  /** An org admin's token, the organization and that identity (never deleted or demoted by the fuzzer). */
  token: string;
  orgId: string;
  ownIdentityId: string;
}

export interface FuzzFailure {
  kind: '5xx' | 'off-shape';
  request: FuzzRequest;
  status: number;
  body: string;
}

export interface FuzzReport {
  requests: number;
  statuses: Record<number, number>;
  failures: FuzzFailure[];
  /** Per operation: requests sent and milliseconds spent. */
  operations: Record<string, { requests: number; ms: number }>;
  /**
   * Per operation: input that passed the route's schema and was refused by
   * PostgreSQL (422 without `details`, from the database-error mapping): the
   * places where the edge's input rules do not yet cover a field.
   */
  refusedByDatabase: Record<string, { count: number; example: FuzzRequest }>;
}

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: 'path' | 'query'; schema: JsonSchema; required: boolean }[];
  body?: JsonSchema;
}

/** Operations that would end the fuzzer's own session. */
const SKIPPED = new Set(['POST /api/v1/auth/logout']);

/** Which pool of known values a parameter or body field draws from. */
const POOL_OF: Record<string, string> = {
  workspaceId: 'project',
  projectId: 'project',
  organizationId: 'org',
  id: 'environment',
  envId: 'environment',
  environment: 'envSlug',
  folderId: 'folder',
  folderIdOrName: 'folderName',
  secretName: 'secretKey',
  secretKey: 'secretKey',
  tagId: 'tag',
  tagIds: 'tag',
  tagSlug: 'tagSlug',
  identityId: 'identity',
  secretImportId: 'import',
  integrationId: 'integration',
  integrationAuthId: 'integrationAuth',
  roleId: 'role',
  roleSlug: 'roleSlug',
  membershipId: 'membership',
  privilegeId: 'privilege',
  clientSecretId: 'clientSecret',
  secretPath: 'path',
  path: 'path',
  directory: 'path',
  workspaceSlug: 'projectSlug',
  projectSlug: 'projectSlug',
};

/** Where answers carry new resources: response key → pool, plus which of its fields. */
const HARVEST: Record<string, [pool: string, field: string][]> = {
  project: [
    ['project', 'id'],
    ['projectSlug', 'slug'],
  ],
  workspace: [
    ['project', 'id'],
    ['projectSlug', 'slug'],
  ],
  environment: [
    ['environment', 'id'],
    ['envSlug', 'slug'],
  ],
  folder: [
    ['folder', 'id'],
    ['folderName', 'name'],
  ],
  secret: [['secretKey', 'secretKey']],
  secrets: [['secretKey', 'secretKey']],
  workspaceTag: [
    ['tag', 'id'],
    ['tagSlug', 'slug'],
  ],
  tag: [
    ['tag', 'id'],
    ['tagSlug', 'slug'],
  ],
  identity: [['identity', 'id']],
  secretImport: [['import', 'id']],
  integration: [['integration', 'id']],
  integrationAuth: [['integrationAuth', 'id']],
  role: [
    ['role', 'id'],
    ['roleSlug', 'slug'],
  ],
  membership: [['membership', 'id']],
  identityMembership: [['membership', 'id']],
  privilege: [['privilege', 'id']],
  clientSecretData: [['clientSecret', 'id']],
};

export function operationsOf(openapi: any): { operations: Operation[]; resolve: Resolve } {
  const resolve: Resolve = (schema) => {
    if (!schema?.$ref) return schema ?? {};
    const name = schema.$ref.split('/').at(-1)!;
    return openapi.components?.schemas?.[name] ?? {};
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(openapi.paths)) {
    if (path.startsWith('/api/docs')) continue;
    for (const [method, operation] of Object.entries<any>(methods)) {
      const verb = method.toUpperCase();
      if (SKIPPED.has(`${verb} ${path}`)) continue;
      // a server-sent event stream never ends while its subscriber lives; in-process requests would wait for ever
      if (JSON.stringify(operation.responses ?? {}).includes('text/event-stream')) continue;
      const params = (operation.parameters ?? [])
        .filter((param: any) => param.in === 'path' || param.in === 'query')
        .map((param: any) => ({ name: param.name, in: param.in, schema: resolve(param.schema ?? {}), required: Boolean(param.required) }));
      const body = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({ method: verb, path, params, body: body ? resolve(body) : undefined });
    }
  }
  return { operations, resolve };
}

class Pools {
  readonly #values = new Map<string, string[]>();

  constructor(seed: Record<string, string[]>) {
    for (const [pool, values] of Object.entries(seed)) this.#values.set(pool, [...values]);
  }

  get(pool: string): string[] {
    return this.#values.get(pool) ?? [];
  }

  add(pool: string, value: unknown): void {
    if (typeof value !== 'string' || value.length === 0 || value.length > 200) return;
    const values = this.#values.get(pool) ?? [];
    if (values.includes(value)) return;
    values.push(value);
    if (values.length > 40) values.shift();
    this.#values.set(pool, values);
  }

  remove(pool: string, value: string): void {
    this.#values.set(
      pool,
      this.get(pool).filter((known) => known !== value),
    );
  }
}

type Draw = <T>(arbitrary: fc.Arbitrary<T>) => T;

const digit = fc.integer({ min: 0, max: 9 });
const coin = fc.boolean();

/** A value for a named field: a known one most of the time when there is one. */
function drawValue(draw: Draw, name: string, schema: JsonSchema, resolve: Resolve, pools: Pools): unknown {
  const known = POOL_OF[name] ? pools.get(POOL_OF[name]) : [];
  const isArray = resolve(schema).type === 'array';
  if (known.length > 0 && draw(digit) < 7) {
    const pick = draw(fc.constantFrom(...known));
    return isArray ? [pick] : pick;
  }
  return draw(arbitraryFor(schema, resolve));
}

function drawBody(draw: Draw, schema: JsonSchema, resolve: Resolve, pools: Pools): unknown {
  const resolved = resolve(schema);
  if (!resolved.properties) return draw(arbitraryFor(resolved, resolve));
  const body: Record<string, unknown> = {};
  const required = new Set(resolved.required ?? []);
  for (const [name, property] of Object.entries(resolved.properties)) {
    if (!required.has(name) && draw(coin)) continue;
    body[name] = drawValue(draw, name, property, resolve, pools);
  }
  // now and then: a required field missing, an unknown one, or a body of the wrong kind
  switch (draw(fc.integer({ min: 0, max: 19 }))) {
    case 0:
      if (required.size > 0) delete body[draw(fc.constantFrom(...required))];
      break;
    case 1:
      body[draw(fc.constantFrom('__proto__', 'constructor', 'extra', ''))] = draw(hostile());
      break;
    case 2:
      return draw(hostile());
  }
  return body;
}

function pathSegment(draw: Draw, value: unknown): string {
  switch (draw(fc.integer({ min: 0, max: 29 }))) {
    case 0:
      return draw(fc.constantFrom('%', '%ZZ', '%E0%A4%A', '%00', '%2F', '..', '%ED%A0%80'));
    case 1:
      return encodeURIComponent('x'.repeat(draw(fc.integer({ min: 100, max: 3000 }))));
    default:
      return encodeURIComponent(String(value).replace(/[\ud800-\udfff]/g, '?'));
  }
}

function queryString(params: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    search.append(name, String(value).replace(/[\ud800-\udfff]/g, '?'));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function drawRequest(draw: Draw, operation: Operation, resolve: Resolve, pools: Pools, target: FuzzTarget): FuzzRequest {
  let url = operation.path;
  const query: Record<string, unknown> = {};
  for (const param of operation.params) {
    if (param.in === 'path') {
      url = url.replace(`{${param.name}}`, pathSegment(draw, drawValue(draw, param.name, param.schema, resolve, pools)));
    } else if (param.required || draw(coin)) {
      query[param.name] = drawValue(draw, param.name, param.schema, resolve, pools);
    }
  }
  const headers: Record<string, string> = {};
  switch (draw(fc.integer({ min: 0, max: 39 }))) {
    case 0:
      break;
    case 1:
      headers.authorization = draw(fc.constantFrom('Bearer ', 'Bearer x.y.z', 'Basic abc', `Bearer ${target.token}x`));
      break;
    default:
      headers.authorization = `Bearer ${target.token}`;
  }
  const request: FuzzRequest = { method: operation.method, url: `${url}${queryString(query)}`, headers };
  if (operation.body) {
    const kind = draw(fc.integer({ min: 0, max: 49 }));
    if (kind === 0) {
      headers['content-type'] = 'application/json';
      request.payload = draw(fc.constantFrom('{', '{"a":', 'null', '[]', '"x"', '{"workspaceId":"\\u0000"}', '\u0000'));
    } else if (kind === 1) {
      headers['content-type'] = draw(fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml'));
      request.payload = 'a=b&c=%00';
    } else {
      headers['content-type'] = 'application/json';
      request.payload = JSON.stringify(drawBody(draw, operation.body, resolve, pools));
    }
  }
  return request;
}

/** Puts the ids, slugs, names and paths a successful answer names into the pools; a DELETE takes them out. */
function learn(request: FuzzRequest, answer: FuzzAnswer, pools: Pools): void {
  if (answer.status !== 200) return;
  let body: any;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return;
  }
  if (typeof body !== 'object' || body === null) return;
  const remove = request.method === 'DELETE';
  for (const [key, fields] of Object.entries(HARVEST)) {
    const found = body[key];
    for (const item of Array.isArray(found) ? found : found ? [found] : []) {
      for (const [pool, field] of fields) {
        const value = item?.[field];
        if (typeof value !== 'string') continue;
        if (remove) pools.remove(pool, value);
        else pools.add(pool, value);
      }
    }
  }
  if (!remove && body.folder && typeof request.payload === 'string') {
    try {
      const sent = JSON.parse(request.payload);
      if (typeof sent.path === 'string' && typeof sent.name === 'string') pools.add('path', `${sent.path.replace(/\/+$/, '')}/${sent.name}`);
    } catch {
      // not JSON
    }
  }
}

const ERROR_KEYS = new Set(['statusCode', 'message', 'error', 'code', 'reqId', 'details']);

/** Why an error answer is off the documented shape, or undefined when it is on it. */
export function offShape(answer: FuzzAnswer): string | undefined {
  let body: any;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return 'not JSON';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'not an object';
  const extra = Object.keys(body).filter((key) => !ERROR_KEYS.has(key));
  if (extra.length > 0) return `unexpected keys ${extra.join(',')}`;
  if (body.statusCode !== answer.status) return `statusCode ${body.statusCode} for HTTP ${answer.status}`;
  if (typeof body.message !== 'string' || typeof body.error !== 'string' || typeof body.code !== 'string') return 'message, error or code missing';
  if (typeof body.reqId !== 'string' || !body.reqId.startsWith('req-')) return 'reqId missing';
  return undefined;
}

function refusedByDatabase(answer: FuzzAnswer): boolean {
  try {
    const body = JSON.parse(answer.body);
    return body.error === 'ValidationFailure' && body.details === undefined;
  } catch {
    return false;
  }
}

export interface FuzzOptions {
  seed: number;
  requests: number;
  onFailure?: (failure: FuzzFailure) => void;
  onProgress?: (done: number, report: FuzzReport) => void;
}

export async function fuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const { operations, resolve } = operationsOf(target.openapi);
  const creates = operations.filter((operation) => operation.method === 'POST');
  const pools = new Pools({ org: [target.orgId], envSlug: ['dev', 'staging', 'prod'], path: ['/', '/a', '/a/b'] });
  const report: FuzzReport = { requests: 0, statuses: {}, failures: [], operations: {}, refusedByDatabase: {} };
  await fc.assert(
    fc.asyncProperty(fc.gen(), async (gen) => {
      const draw: Draw = (arbitrary) => gen(() => arbitrary);
      for (let step = 0; step < options.requests; step++) {
        // creating is likelier early on, so that later steps have something to use and delete
        const pool = step < options.requests / 10 && draw(coin) ? creates : operations;
        const operation = draw(fc.constantFrom(...pool));
        const request = drawRequest(draw, operation, resolve, pools, target);
        const sentAt = performance.now();
        const answer = await target.send(request);
        const name = `${operation.method} ${operation.path}`;
        const spent = (report.operations[name] ??= { requests: 0, ms: 0 });
        spent.requests++;
        spent.ms += performance.now() - sentAt;
        report.requests++;
        report.statuses[answer.status] = (report.statuses[answer.status] ?? 0) + 1;
        const failure: FuzzFailure | undefined =
          answer.status >= 500
            ? { kind: '5xx', request, status: answer.status, body: answer.body }
            : answer.status >= 400 && offShape(answer)
              ? { kind: 'off-shape', request, status: answer.status, body: answer.body }
              : undefined;
        if (failure) {
          report.failures.push(failure);
          options.onFailure?.(failure);
        }
        if (answer.status === 422 && refusedByDatabase(answer)) (report.refusedByDatabase[name] ??= { count: 0, example: request }).count++;
        learn(request, answer, pools);
        if ((step + 1) % 1000 === 0) options.onProgress?.(step + 1, report);
      }
      return true;
    }),
    { seed: options.seed, numRuns: 1, endOnFailure: true },
  );
  return report;
}
