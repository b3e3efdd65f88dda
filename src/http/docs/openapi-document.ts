import swagger from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { VERSION } from '../../version.ts';
import type { ZodApp } from '../zod-app.ts';
import { errorResponse, errorResponseSchema, errorStatusesOf } from './error-responses.ts';
import { exampleOf } from './examples.ts';
import type { ErrorStatus } from './operation-doc.ts';
import { registerReferencePage } from './reference-page.ts';
import { REVISION_HEADER } from '../revision-header.ts';

/** Query and body fields that name a project or an environment, which may not exist (404). */
const RESOURCE_FIELDS = new Set(['workspaceId', 'projectId', 'workspaceSlug', 'projectSlug', 'environment', 'identityId', 'integrationAuthId', 'secretName']);

const TAGS = [
  { name: 'System', description: 'Status, the entry point and the one-time bootstrap of an instance.' },
  { name: 'Authentication', description: 'User login and logout, renewing and revoking access tokens.' },
  { name: 'Universal Auth', description: 'Machine identities log in with a client id and secret and get an access token.' },
  { name: 'Kubernetes Auth', description: "Machine identities log in with a Kubernetes service-account token, checked through the cluster's TokenReview API." },
  { name: 'JWT Auth', description: 'Machine identities log in with a JWT signed by configured keys (static, or a JWKS URL) whose claims match the bounds.' },
  { name: 'Identities', description: 'Machine identities of an organization and their organization role.' },
  { name: 'Users', description: 'Inviting users into an organization and listing its members.' },
  { name: 'Projects', description: 'Projects (workspaces): the unit of secrets, environments, members and audit.' },
  { name: 'Environments', description: 'The environments of a project (dev, staging, prod …).' },
  { name: 'Folders', description: 'Folders inside an environment; a secret path is a folder path.' },
  { name: 'Secrets', description: 'Secrets (v3 API, as the Infisical SDKs and operator call it): read, write, batch, tag.' },
  { name: 'Secrets (v4)', description: 'The same secrets through the v4 API the Infisical CLI calls, with v4 defaults.' },
  { name: 'Secret imports', description: 'Imports make the secrets of another environment/path visible in this one.' },
  { name: 'Tags', description: 'Tags of a project, to label and filter secrets.' },
  { name: 'Integrations', description: 'Integration records (the operator keeps one per Integration resource) and integration auth.' },
  { name: 'Memberships', description: 'Who is a member of a project, with which roles (users and identities).' },
  { name: 'Roles', description: 'Custom project roles: CASL rules that may name environments and secret paths.' },
  { name: 'Additional privileges', description: "Extra rules for one identity in one project, permanent or temporary." },
  { name: 'Namespace grants', description: 'Which namespaces of which clusters may use a project through the operator.' },
  { name: 'Clusters', description: 'Registered Kubernetes clusters and the identities that act for each (their operators).' },
  { name: 'Audit logs', description: 'Every mutation and every audited read, for a project or a whole organization.' },
  { name: 'Events', description: 'A server-sent event stream of a project\'s changes.' },
];

const DESCRIPTION = `The secrets API of Coffer, wire-compatible with the Infisical REST API for the operations it covers.

**Start here.** On a new instance, \`POST /api/v1/admin/bootstrap\` (or \`coffer bootstrap\`) creates the admin user, the
organization and an admin machine identity, and answers its access token. Send it as \`Authorization: Bearer <token>\`.
Machine identities get tokens from \`POST /api/v1/auth/universal-auth/login\`, \`/api/v1/auth/kubernetes-auth/login\` or \`/api/v1/auth/jwt-auth/login\`; users from \`POST /api/v1/auth/login\`.

**Errors.** Every error answers \`{statusCode, message, error, code, reqId}\` (the \`ErrorResponse\` schema): 422 for invalid
input (with \`details\`), 400 for malformed JSON and broken rules, 401 for a missing, revoked or expired token, 403 for
a malformed token or a missing permission, 404 for anything that does not exist or that you may not see (a project you
are not a member of answers as one that does not exist). \`error\` is the name Infisical answers (\`BadRequest\` for
every 400, \`NotFound\` for every 404); \`code\` is Coffer's specific name (\`SecretExists\`, \`InvalidPath\` …).

**Audit.** Every change is written to the audit log in the same transaction; the reads the reference audits are too.
No secret value, client secret or token is ever logged or audited.`;

export async function registerDocs(app: ZodApp): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Coffer API', description: DESCRIPTION, version: VERSION, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
      servers: [
        { url: '/', description: 'This server (the address the reference was opened at)' },
        { url: 'http://127.0.0.1:8080', description: '`coffer serve` on this machine with its default settings' },
      ],
      tags: TAGS,
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An access token: from the bootstrap, a universal-auth, Kubernetes Auth or JWT Auth login, or a user login.' } },
        schemas: { ErrorResponse: errorResponseSchema as never },
      },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => completeDocument(('openapiObject' in document ? document.openapiObject : document.swaggerObject) as unknown as OpenApiDocument) as never,
  });
  registerReferencePage(app);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the generated document is walked as plain JSON
type JsonSchema = Record<string, any>;

interface Operation {
  security?: unknown[];
  parameters?: { in: string; name: string; schema?: JsonSchema; example?: unknown; required?: boolean }[];
  requestBody?: { content: Record<string, { schema?: JsonSchema; example?: unknown }> };
  responses: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: JsonSchema; example?: unknown }> }>;
  'x-coffer-errors'?: ErrorStatus[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  [key: string]: unknown;
}

/**
 * What the routes leave to the document: each operation's error responses (the
 * shared ErrorResponse), and examples for its parameters, body and answers
 * built from the schemas' own examples and the shared example values.
 */
function completeDocument(document: OpenApiDocument): OpenApiDocument {
  for (const methods of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      describeSuccess(operation);
      if (WRITE_METHODS.has(method)) describeRevisionHeader(operation);
      addExamples(operation);
      addErrorResponses(operation);
    }
  }
  return document;
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

const REVISION_HEADER_DOC = {
  description:
    'The newest change-feed revision this request committed, when it changed what a place resolves to or how it is listed (secrets, folders, imports, environments, tags, integrations, grants). Wait until the operators reflect it with `GET /api/v1/changes/wait?revision=…`.',
  schema: { type: 'integer', minimum: 1, example: 42 },
};

/** Every write may answer the revision it committed (http/revision-header.ts). */
function describeRevisionHeader(operation: Operation): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (status.startsWith('2')) response.headers = { ...response.headers, [REVISION_HEADER]: REVISION_HEADER_DOC };
  }
}

function describeSuccess(operation: Operation): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (status.startsWith('2') && (!response.description || response.description === 'Default Response')) response.description = 'Success.';
  }
}

function addErrorResponses(operation: Operation): void {
  const parameters = operation.parameters ?? [];
  const body = operation.requestBody?.content['application/json']?.schema;
  const statuses = errorStatusesOf({
    isPublic: Array.isArray(operation.security) && operation.security.length === 0,
    hasParameters: parameters.length > 0,
    hasBody: operation.requestBody !== undefined,
    namesResource: parameters.some((parameter) => parameter.in === 'path' || RESOURCE_FIELDS.has(parameter.name)) || Object.keys((body?.properties ?? {}) as object).some((name) => RESOURCE_FIELDS.has(name)),
    declared: operation['x-coffer-errors'] ?? [],
  });
  delete operation['x-coffer-errors'];
  for (const status of statuses) operation.responses[String(status)] ??= errorResponse(status);
}

function addExamples(operation: Operation): void {
  for (const parameter of operation.parameters ?? []) {
    if (parameter.example !== undefined) continue;
    const example = exampleOf({ type: 'object', properties: { [parameter.name]: parameter.schema ?? {} }, required: [parameter.name] }, 'request');
    const value = (example.value as Record<string, unknown> | undefined)?.[parameter.name];
    if (example.missing.length === 0 && value !== undefined) parameter.example = value;
  }
  const bodies = Object.values(operation.requestBody?.content ?? {}).map((entry) => [entry, 'request'] as const);
  const answers = Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {}).map((entry) => [entry, 'response'] as const));
  for (const [entry, kind] of [...bodies, ...answers]) {
    if (entry.example !== undefined || !entry.schema) continue;
    const example = exampleOf(entry.schema, kind);
    if (example.missing.length === 0) entry.example = example.value;
  }
}
