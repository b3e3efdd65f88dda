import { afterAll, describe, expect, test } from 'vitest';
import type { ZodType } from 'zod';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The OpenAPI document (/api/docs/openapi.json) is the reference people work
 * from: every operation says what it does, who may call it and what it
 * changes; every parameter and body field is described; requests and answers
 * have examples that the route's own schemas accept; errors are documented
 * with the one error body. A route added without these fails here.
 */

type JsonSchema = Record<string, any>;
interface Parameter {
  in: 'query' | 'path' | 'header';
  name: string;
  description?: string;
  example?: unknown;
  required?: boolean;
  schema?: JsonSchema;
}
interface Operation {
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: JsonSchema; example?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: JsonSchema; example?: unknown }> }>;
}

const app: TestApp = await startTestApp();
afterAll(async () => app?.close());

const documentResponse = await app.request<any>('GET', '/api/docs/openapi.json');
const document = documentResponse.body;
const operations = Object.entries<Record<string, Operation>>(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation })),
);
const schemas = new Map(app.app.registeredRoutes.map((route) => [`${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`, route.schema]));
const isPublic = (operation: Operation) => Array.isArray(operation.security) && operation.security.length === 0;

/** Body fields (nested too) without a description, as dotted paths. */
function undescribedFields(schema: JsonSchema | undefined, path = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const own = Object.entries<JsonSchema>(schema.properties ?? {}).flatMap(([name, property]) => [
    ...(property.description ? [] : [`${path}${name}`]),
    ...undescribedFields(property, `${path}${name}.`),
  ]);
  const nested = [schema.items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].flatMap((part) => undescribedFields(part, path));
  return [...own, ...nested];
}

function accepts(schema: unknown, value: unknown): string | true {
  const result = (schema as ZodType).safeParse(value);
  return result.success || result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
}

describe('the OpenAPI document', () => {
  test('is served, titled, versioned, with a server entry and the shared error schema', () => {
    expect(documentResponse.status).toBe(200);
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'Coffer API', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    expect(document.info.description).toContain('{statusCode, message, error, code, reqId}');
    expect(document.servers).toEqual(expect.arrayContaining([expect.objectContaining({ url: '/' })]));
    expect(document.components.schemas.ErrorResponse).toMatchObject({ required: ['statusCode', 'message', 'error', 'code', 'reqId'] });
    expect(document.tags.every((tag: { description?: string }) => tag.description)).toBe(true);
    expect(operations.length).toBeGreaterThan(100);
  });
});

describe.each(operations)('$key', ({ key, method, path, operation }) => {
  const routeSchema = schemas.get(key);

  test('says what it does, who may call it and what it changes', () => {
    expect(operation.summary, 'summary').toBeTruthy();
    const [does, who, effects] = (operation.description ?? '').split(/\n\n\*\*Who may call it:\*\* |\n\n\*\*Effects:\*\* /);
    expect(does?.trim(), 'what it does').toBeTruthy();
    expect(who?.trim(), 'who may call it').toBeTruthy();
    expect(effects?.trim(), 'what it changes').toBeTruthy();
    expect(who!.startsWith('anyone') === isPublic(operation), 'public exactly when it says anyone may call it').toBe(true);
  });

  test('describes every parameter and gives an example its route accepts', () => {
    const parameters = operation.parameters ?? [];
    expect(
      parameters.filter((parameter) => !parameter.description).map((parameter) => parameter.name),
      'undescribed',
    ).toEqual([]);
    expect(
      parameters.filter((parameter) => parameter.example === undefined).map((parameter) => parameter.name),
      'without example',
    ).toEqual([]);
    for (const location of ['query', 'path'] as const) {
      const given = parameters.filter((parameter) => parameter.in === location);
      if (given.length === 0) continue;
      const values = Object.fromEntries(given.map((parameter) => [parameter.name, String(parameter.example)]));
      const schema = location === 'query' ? routeSchema?.querystring : routeSchema?.params;
      expect(accepts(schema, values), `${location} example ${JSON.stringify(values)}`).toBe(true);
    }
  });

  // only operations that take a body get this test (not a skipped one for each that does not)
  const { requestBody } = operation;
  if (requestBody) {
    test('describes every body field and gives an example body its route accepts', () => {
      const media = requestBody.content['application/json']!;
      expect(undescribedFields(media.schema), 'undescribed body fields').toEqual([]);
      expect(media.example, 'request example').toBeDefined();
      expect(accepts(routeSchema?.body, media.example), `body example ${JSON.stringify(media.example)}`).toBe(true);
    });
  }

  test('gives an example of its answer that its response schema accepts', () => {
    const success = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
    expect(success.length, 'a success response').toBeGreaterThan(0);
    for (const [status, response] of success) {
      for (const [type, media] of Object.entries(response.content ?? {})) {
        expect(media.example, `${status} ${type} example`).toBeDefined();
        const schema = (routeSchema?.response as Record<string, unknown> | undefined)?.[status];
        if (type === 'application/json' && schema) expect(accepts(schema, media.example), `${status} example`).toBe(true);
      }
    }
  });

  test('documents its error responses with the shared error body', () => {
    const statuses = Object.keys(operation.responses).filter((status) => /^[45]/.test(status));
    if (!isPublic(operation)) expect(statuses).toEqual(expect.arrayContaining(['401', '403']));
    if ((operation.parameters ?? []).length > 0 || operation.requestBody) expect(statuses).toContain('422');
    if (operation.requestBody) expect(statuses).toContain('400');
    if (path.includes('{')) expect(statuses).toContain('404');
    for (const status of statuses) {
      const response = operation.responses[status]!;
      expect(response.description.length, `${status} description`).toBeGreaterThan(20);
      const media = response.content?.['application/json'];
      expect(media?.schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
      expect(media?.example).toMatchObject({
        statusCode: Number(status),
        error: expect.any(String),
        code: expect.any(String),
        message: expect.any(String),
        reqId: expect.any(String),
      });
    }
  });

  test('is public exactly when the server answers it without a token', async () => {
    const url = path.replace(/\{(\w+)\}/g, (_match, name: string) =>
      encodeURIComponent(String((operation.parameters?.find((parameter) => parameter.name === name)?.example as string | undefined) ?? 'x')),
    );
    const answer = await app.request<any>(method, url);
    if (isPublic(operation)) expect(answer.body?.message, `${key} without a token`).not.toBe('Token missing');
    else expect({ status: answer.status, message: answer.body?.message }).toEqual({ status: 401, message: 'Token missing' });
  });
});

describe('where a reader starts', () => {
  test('GET / answers links to the reference, and sends browsers to it', async () => {
    const answer = await app.request<any>('GET', '/');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      name: 'coffer',
      version: document.info.version,
      docs: '/api/docs',
      openapi: '/api/docs/openapi.json',
      status: '/api/status',
      bootstrap: '/api/v1/admin/bootstrap',
    });
    const browser = await app.request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(browser.status).toBe(302);
    expect(browser.headers.location).toBe('/api/docs');
  });

  test("the reference page is titled Coffer and shows none of the hosted service's controls", async () => {
    const page = await app.app.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>Coffer API reference</title>');
    const configuration = JSON.parse(/createApiReference\('#app', (\{.*?\})\)\s*<\/script>/s.exec(page.body)?.[1] ?? '{}');
    expect(configuration).toMatchObject({
      title: 'Coffer',
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      hideClientButton: true,
      telemetry: false,
      withDefaultFonts: false,
    });
  });
});
