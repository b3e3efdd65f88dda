import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { INT4_MAX, INT4_MIN } from '../../src/validation/input.ts';
import {
  BIGINT_FIELDS,
  detailPath,
  exampleRequest,
  type Field,
  fieldName,
  fieldsOf,
  type OpenApiDocument,
  RECORD_KEY,
  type RequestParts,
  resolver,
  withField,
} from '../support/request-fields.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { type ApiResponse, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Hostile input is refused at the edge, in the documented body, naming the
 * field, with nothing changed: NUL, unpaired surrogates, over-long strings,
 * integers past their range, absurd durations — sent to every field of every
 * route (read from the API reference, so a new route is covered when it is
 * added). Secret values and comments, stored encrypted as bytes, keep NUL
 * exactly and refuse only unpaired surrogates.
 */
const app: TestApp = await startTestApp();
let fx: Awaited<ReturnType<typeof secretsFixture>>;
let identityId: string;

const document = (await app.request<OpenApiDocument>('GET', '/api/docs/openapi.json')).body;
const resolve = resolver(document);
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation })),
);

beforeAll(async () => {
  fx = await secretsFixture(app);
  identityId = (await app.request('POST', '/api/v1/identities', { token: fx.token, body: { name: 'worker', organizationId: fx.orgId, role: 'member' } })).body.identity
    .id;
  expect((await app.request('POST', `/api/v2/workspace/${fx.projectId}/identity-memberships/${identityId}`, { token: fx.token, body: { role: 'viewer' } })).status).toBe(
    200,
  );
});
afterAll(async () => app?.close());

const documented = (statusCode: number, error: string) => ({ statusCode, error, message: expect.any(String), reqId: expect.stringMatching(/^req-/) });

/** Reads are audited; nothing else may change. */
async function unchangedBy(action: () => Promise<void>): Promise<void> {
  const before = await snapshotDatabase(app.database);
  await action();
  const after = await snapshotDatabase(app.database);
  expect({ ...after, audit_logs: [] }).toEqual({ ...before, audit_logs: [] });
  expect(after.audit_logs).toEqual(before.audit_logs);
}

describe('the inputs that answered 500', () => {
  const cases: [string, () => [string, string, Record<string, unknown>?, Record<string, string>?], number, string?][] = [
    [
      'a NUL in a batch secret name',
      () => ['POST', '/api/v3/secrets/batch/raw', { workspaceId: fx.projectId, environment: 'dev', secrets: [{ secretKey: 'A\u0000B', secretValue: 'v' }] }],
      422,
      'body/secrets/0/secretKey',
    ],
    [
      'a NUL in a secret name (path parameter)',
      () => ['POST', '/api/v3/secrets/raw/A%00B', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'v' }],
      422,
      'params/secretName',
    ],
    [
      'a NUL in an environment slug filter',
      () => ['GET', '/api/v3/secrets/raw', undefined, { workspaceId: fx.projectId, environment: 'd\u0000v' }],
      422,
      'querystring/environment',
    ],
    ['a NUL in a project name', () => ['POST', '/api/v2/workspace', { projectName: 'P\u0000' }], 422, 'body/projectName'],
    ['a NUL in an identity name', () => ['POST', '/api/v1/identities', { name: 'w\u0000', organizationId: fx.orgId }], 422, 'body/name'],
    ['a NUL in an environment name', () => ['POST', `/api/v1/workspace/${fx.projectId}/environments`, { name: 'E\u0000', slug: 'nul-env' }], 422, 'body/name'],
    ['a NUL in a tag color', () => ['POST', `/api/v1/workspace/${fx.projectId}/tags`, { slug: 'nul-color', color: '#\u0000' }], 422, 'body/color'],
    [
      'an environment position past 2^31',
      () => ['POST', `/api/v1/workspace/${fx.projectId}/environments`, { name: 'Far', slug: 'far', position: 2 ** 40 }],
      422,
      'body/position',
    ],
    [
      'an access-token use limit past 2^31',
      () => ['POST', `/api/v1/auth/universal-auth/identities/${identityId}`, { accessTokenNumUsesLimit: 2 ** 40 }],
      422,
      'body/accessTokenNumUsesLimit',
    ],
    [
      'a temporary range of 999999999999d',
      () => [
        'PATCH',
        `/api/v2/workspace/${fx.projectId}/identity-memberships/${identityId}`,
        {
          roles: [
            { role: 'viewer' },
            { role: 'admin', isTemporary: true, temporaryMode: 'relative', temporaryRange: '999999999999d', temporaryAccessStartTime: new Date().toISOString() },
          ],
        },
      ],
      422,
      'body/roles/1/temporaryRange',
    ],
    [
      'a non-UUID projectId on the organization audit log (an id that names nothing)',
      () => ['GET', '/api/v1/organization/audit-logs', undefined, { projectId: 'not-a-uuid' }],
      404,
    ],
  ];

  test.each(cases)('%s → %i in the documented body, nothing written', async (_name, build, status, field) => {
    const [method, url, body, query] = build();
    const before = await snapshotDatabase(app.database);
    const response = await app.request(method, url, { token: fx.token, body, query });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject(documented(status, status === 422 ? 'ValidationFailure' : 'NotFound'));
    if (field) {
      const [place, ...path] = field.split('/');
      expect(response.body.details).toContainEqual({ in: place, path: `/${path.join('/')}`, message: expect.any(String) });
      expect(response.body.message).toContain(`${place}.${path.join('.')}`);
    }
    const after = await snapshotDatabase(app.database);
    expect({ ...after, audit_logs: [] }).toEqual({ ...before, audit_logs: [] });
  });
});

interface Probe {
  what: string;
  value: unknown;
  /** 422 naming the field, or 413 when the value cannot fit in a request body. */
  status: 422 | 413;
}

const BODY_LIMIT = 1024 * 1024;

/** What each field's rules refuse. */
function probesFor(field: Field, current: unknown): Probe[] {
  const { schema } = field;
  if (field.kind === 'integer' || field.kind === 'number') {
    const int4 = BIGINT_FIELDS.has(fieldName(field)) ? [] : [INT4_MAX + 1, INT4_MIN - 1];
    const values = field.kind === 'integer' ? [schema.maximum + 1, schema.minimum - 1, ...int4, 2 ** 53, 1.5] : [Number.MAX_VALUE, -Number.MAX_VALUE];
    return [...new Set(values)].map((value) => ({ what: `the number ${value}`, value, status: 422 }));
  }
  // a constant admits one value: anything else is refused as not being it
  if (schema.const !== undefined) return [];
  const text = typeof current === 'string' && current.length > 0 ? current : 'sample';
  const name = field.steps.at(-1);
  const probes: Probe[] = [];
  const storedAsBytes = name === 'secretValue' || name === 'secretComment';
  // a header cannot carry NUL over HTTP: Node's parser refuses it before any route runs
  if (!storedAsBytes && field.place !== 'headers') probes.push({ what: 'a NUL', value: `${text}\u0000`, status: 422 });
  // a JSON string can carry an unpaired surrogate; a URL (UTF-8, percent-encoded) cannot
  if (field.place === 'body') {
    probes.push({ what: 'an unpaired high surrogate', value: `${text}\uD800`, status: 422 }, { what: 'an unpaired low surrogate', value: `\uDC00${text}`, status: 422 });
  }
  if (typeof schema.maxLength === 'number' && !(field.place === 'params' && schema.maxLength >= 2048)) {
    probes.push({ what: `${schema.maxLength + 1} characters`, value: 'x'.repeat(schema.maxLength + 1), status: schema.maxLength + 1 >= BODY_LIMIT ? 413 : 422 });
  }
  // digits in a query: the largest number that many digits write is past the field's range
  if (schema.pattern === '^-?\\d+$') probes.push({ what: 'a number past its range', value: '9'.repeat(schema.maxLength), status: 422 });
  if (name === 'temporaryRange') {
    probes.push({ what: 'an absurd duration', value: '999999999999d', status: 422 }, { what: 'a zero duration', value: '0s', status: 422 });
  }
  return probes;
}

/** The value a field has in a request, when it has one. */
function valueAt(parts: RequestParts, field: Field): unknown {
  let value: unknown = parts[field.place];
  for (const step of field.steps) {
    if (typeof step === 'symbol' || value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}

function send(method: string, path: string, parts: RequestParts, token: string | null): Promise<ApiResponse> {
  const url = path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(String(parts.params[name] ?? 'x')));
  const strings = (values: Record<string, unknown>) => Object.fromEntries(Object.entries(values).map(([key, value]) => [key, String(value)]));
  return app.request(method, url, { token, query: strings(parts.querystring), headers: strings(parts.headers), body: parts.body });
}

/**
 * The paths a refusal may name the field by: its own, a record's for a bad key
 * (zod names the key itself), or, inside a union of several kinds of value
 * (client-kept JSON), the path of the union's value, whose message then says
 * what each part may hold.
 */
function namings(field: Field, probe: Probe): string[] {
  const own = detailPath(field);
  const keyed = field.steps.at(-1) === RECORD_KEY ? [`${own === '/' ? '' : own}/${String(probe.value)}`] : [];
  const unions = field.unionDepths.map((depth) => detailPath({ ...field, steps: field.steps.slice(0, depth) }));
  return [own, ...keyed, ...unions];
}

/** The answer to one probe, when it is not the documented refusal naming the field. */
function mismatch(response: ApiResponse, field: Field, probe: Probe): string | undefined {
  const body = response.body ?? {};
  if (probe.status === 413) {
    return response.status === 413 && body.error === 'PayloadTooLarge' && typeof body.reqId === 'string'
      ? undefined
      : `${response.status} ${JSON.stringify(body).slice(0, 200)}`;
  }
  const details: { in?: string; path?: string }[] = Array.isArray(body.details) ? body.details : [];
  const named = details.some((detail) => detail.in === field.place && namings(field, probe).includes(detail.path ?? ''));
  const shaped = body.statusCode === 422 && body.error === 'ValidationFailure' && typeof body.message === 'string' && typeof body.reqId === 'string';
  return response.status === 422 && shaped && named ? undefined : `${response.status} ${JSON.stringify(body).slice(0, 300)}`;
}

describe('every field of every route refuses what its rules refuse: 422 naming it, nothing changed', () => {
  test.each(operations)('$key', async ({ method, path, operation }) => {
    const token = Array.isArray(operation.security) && operation.security.length === 0 ? null : fx.token;
    const example = exampleRequest(operation);
    const fields = fieldsOf(operation, resolve);
    const wrong: string[] = [];
    let sent = 0;
    await unchangedBy(async () => {
      for (const field of fields) {
        for (const probe of probesFor(field, valueAt(example, field))) {
          const response = await send(method, path, withField(example, field, probe.value, resolve), token);
          sent++;
          const problem = mismatch(response, field, probe);
          if (problem) wrong.push(`${fieldName(field)} with ${probe.what}: ${problem}`);
        }
      }
    });
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(fields.length > 0 ? 1 : 0);
  });
});

describe('secret values and comments are kept exactly, NUL included; unpaired surrogates are refused', () => {
  const exact = 'line one\u0000after a NUL\u0000\u0000end \u{1F600}';

  test('a value and comment with NUL characters read back unchanged (single, batch, update, v3 and v4)', async () => {
    const created = await fx.createSecret('WITH_NUL', { secretValue: exact, secretComment: exact });
    expect(created.status).toBe(200);
    expect(created.body.secret).toMatchObject({ secretValue: exact, secretComment: exact });
    expect((await fx.getSecret('WITH_NUL')).body.secret).toMatchObject({ secretValue: exact, secretComment: exact });
    const v4 = await app.request('GET', '/api/v4/secrets/WITH_NUL', { token: fx.token, query: { projectId: fx.projectId, environment: 'dev' } });
    expect(v4.body.secret.secretValue).toBe(exact);

    const batch = await app.request('POST', '/api/v3/secrets/batch/raw', {
      token: fx.token,
      body: { workspaceId: fx.projectId, environment: 'dev', secrets: [{ secretKey: 'BATCH_NUL', secretValue: `b${exact}`, secretComment: exact }] },
    });
    expect(batch.status).toBe(200);
    const updated = await fx.updateSecret('WITH_NUL', { secretValue: `${exact}\u0000` });
    expect(updated.status).toBe(200);

    const listed = new Map<string, { secretValue: string; secretComment: string }>(
      (await fx.listSecrets()).body.secrets.map((secret: any) => [secret.secretKey, secret]),
    );
    expect(listed.get('BATCH_NUL')).toMatchObject({ secretValue: `b${exact}`, secretComment: exact });
    expect(listed.get('WITH_NUL')).toMatchObject({ secretValue: `${exact}\u0000`, secretComment: exact });
    expect((await fx.getSecret('WITH_NUL', { version: '1' })).body.secret.secretValue).toBe(exact);
  });

  test.each([
    ['an unpaired high surrogate in a value', { secretValue: 'a\uD800b' }, 'secretValue'],
    ['an unpaired low surrogate at the end of a value', { secretValue: 'ab\uDC00' }, 'secretValue'],
    ['an unpaired surrogate in a comment', { secretValue: 'ok', secretComment: '\uDFFF' }, 'secretComment'],
  ])('%s → 422 naming the field, nothing written, the stored value unchanged', async (_name, fields, field) => {
    await fx.createSecret('SURROGATE_TARGET', { secretValue: 'before' });
    await unchangedBy(async () => {
      for (const response of [await fx.createSecret('SURROGATE_NEW', fields), await fx.updateSecret('SURROGATE_TARGET', fields)]) {
        expect(response.status).toBe(422);
        expect(response.body.details).toContainEqual({ in: 'body', path: `/${field}`, message: 'must not contain unpaired surrogate characters' });
      }
    });
    expect((await fx.getSecret('SURROGATE_TARGET')).body.secret.secretValue).toBe('before');
  });
});
