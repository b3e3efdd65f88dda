/**
 * Example values by field name, shared by every operation of the API
 * reference, so that one example organization, project, environment, secret
 * and identity runs through all of them. `parent.field` entries name a field
 * inside a particular object (an audit entry's `event.type`). A field whose
 * schema carries its own example (`.meta({ examples: [...] })`) uses that; a
 * value is used only where its JSON type fits the field's.
 */

const ORGANIZATION = '0b7f3c1e-5a2d-4c8e-9f61-3d2a7b9c4e10';
const PROJECT = '6f1c2a9e-4b7d-4e21-9a3c-1d5e8f0b7c42';
const ENVIRONMENT = '9e2b4d6f-8a1c-4e3f-b5d7-2c4e6a8b0d13';
const FOLDER = '4c6e8a0b-2d4f-4a6c-8e0b-7d9f1b3d5f24';
const IDENTITY = '2a4c6e8f-1b3d-4f5a-9c7e-5b7d9f1a3c35';
const USER = '7d9f1b3c-5e7a-4c9e-a1b3-8e0a2c4e6a46';
const OBJECT = '3f9c2a51-7d4e-4b8a-9c61-2e5f0a7b1d93';
const TIME = '2026-03-02T09:30:00.000Z';
const ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdXRoVG9rZW5UeXBlIjoiaWRlbnRpdHlBY2Nlc3NUb2tlbiJ9.c2lnbmF0dXJl';

export const EXAMPLE_VALUES: Record<string, unknown> = {
  // ids
  id: OBJECT,
  _id: OBJECT,
  projectId: PROJECT,
  workspaceId: PROJECT,
  workspace: PROJECT,
  orgId: ORGANIZATION,
  organizationId: ORGANIZATION,
  envId: ENVIRONMENT,
  folderId: FOLDER,
  parentId: FOLDER,
  identityId: IDENTITY,
  userId: USER,
  createdBy: USER,
  actor: IDENTITY,
  integrationId: '5b7d9f1b-3c5e-4a7c-9e1b-4d6f8a0c2e57',
  integrationAuthId: '8a0c2e4a-6b8d-4f0a-8c2e-6f8a0c2e4a68',
  secretImportId: '1c3e5a7c-9e1b-4d3f-a5c7-9b1d3f5a7c79',
  membershipId: 'd5f7b9d1-3e5a-4c7e-9a1c-0e2a4c6e8a80',
  projectMembershipId: 'd5f7b9d1-3e5a-4c7e-9a1c-0e2a4c6e8a80',
  tagId: 'a7c9e1a3-5b7d-4f9b-8d1f-2a4c6e8a0c91',
  clientId: 'f3b5d7e9-1a3c-4e5a-8c9e-1b3d5f7a9c02',
  clientSecretId: 'c1e3a5c7-9b1d-4f3b-a5d7-3c5e7a9c1e13',
  identityUAId: 'e9a1c3e5-7f9b-4d1f-b3a5-4d6f8b0d2f24',
  folderIdOrName: 'db',
  grantId: 'f7b9d1f3-5a7c-4e9a-b1d3-6f8b0d2f4b57',
  // names and slugs
  name: 'Web Shop',
  projectName: 'Web Shop',
  slug: 'web-shop',
  projectSlug: 'web-shop',
  workspaceSlug: 'web-shop',
  'organization.name': 'Acme',
  'organization.slug': 'acme',
  organization: 'Acme',
  'environment.name': 'Development',
  'environment.slug': 'dev',
  envName: 'Development',
  envSlug: 'dev',
  'folder.name': 'db',
  'identity.name': 'ci-deployer',
  'role.name': 'Secret reader',
  'role.slug': 'secret-reader',
  roleSlug: 'viewer',
  'tag.name': 'backend',
  'tag.slug': 'backend',
  'workspaceTag.name': 'backend',
  'workspaceTag.slug': 'backend',
  'privilege.slug': 'read-prod-app',
  privilegeSlug: 'read-prod-app',
  tagSlug: 'backend',
  tagSlugs: 'backend',
  color: '#2e8b57',
  include_imports: 'true',
  includeImports: 'true',
  actorType: 'identity',
  'integrationAuth.metadata': {},
  'authorization.metadata': {},
  'integration.metadata': {},
  type: 'shared',
  // places
  environment: 'dev',
  sourceEnvironment: 'dev',
  environmentSlug: 'dev',
  secretPath: '/',
  path: '/app',
  directory: '/app',
  importPath: '/shared',
  // secrets
  secretName: 'DATABASE_URL',
  secretKey: 'DATABASE_URL',
  newSecretName: 'PRIMARY_DATABASE_URL',
  secretValue: 'postgres://shop@db.internal:5432/shop',
  secretComment: 'Primary database',
  skipMultilineEncoding: false,
  secretKeyCiphertext: 'q7Lw3Jp0c2VjcmV0S2V5',
  secretValueCiphertext: 'Z3mPq8x1dmFsdWVDaXBoZXJ0ZXh0',
  secretCommentCiphertext: 'bW1lbnRDaXBoZXJ0ZXh0',
  secretKeyIV: 'cmFuZG9tSVYxMjM0',
  secretValueIV: 'cmFuZG9tSVY1Njc4',
  secretCommentIV: 'cmFuZG9tSVY5MDEy',
  secretKeyTag: 'Z2NtVGFnS2V5MTIzNDU2',
  secretValueTag: 'Z2NtVGFnVmFsdWU3ODkw',
  secretCommentTag: 'Z2NtVGFnQ29tbWVudDEy',
  algorithm: 'aes-256-gcm',
  keyEncoding: 'base64',
  // people, identities and credentials
  email: 'admin@example.com',
  username: 'admin@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  password: 'a long password',
  role: 'member',
  authMethod: 'universal-auth',
  createdByActorType: 'identity',
  accessToken: ACCESS_TOKEN,
  token: ACCESS_TOKEN,
  clientSecret: '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0',
  clientSecretPrefix: '9f8e7d',
  inviteToken: '1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100ffee',
  description: 'Deploys the web shop from CI',
  ipAddress: '10.0.0.0/8',
  'accessTokenTrustedIp.type': 'ipv4',
  'clientSecretTrustedIp.type': 'ipv4',
  // permissions and temporary access
  subject: 'secrets',
  action: 'read',
  inverted: false,
  permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'prod', secretPath: { $glob: '/app/**' } } }],
  roleId: 'b3d5f7a9-1c3e-4a5c-8e7a-9c1e3a5c7e35',
  temporaryMode: 'relative',
  temporaryRange: '1h',
  temporaryAccessStartTime: TIME,
  temporaryAccessEndTime: '2026-03-02T10:30:00.000Z',
  // namespace grants
  cluster: 'local',
  namespace: 'shop',
  // the operator of another cluster
  managedBy: 'shop/app',
  'grantedBy.name': 'ci-deployer',
  // integrations
  integration: 'kubernetes',
  app: 'app-secrets',
  targetEnvironment: 'shop',
  owner: 'shop',
  url: 'https://vault.example.com',
  // audit
  'event.type': 'update-secret',
  'event.metadata': { environment: 'dev', secretPath: '/', secretKey: 'DATABASE_URL', secretVersion: 2 },
  'actor.type': 'identity',
  'actor.metadata': { identityId: IDENTITY, name: 'ci-deployer' },
  'auditLog.ipAddress': '203.0.113.7',
  userAgent: 'infisical-cli/0.43.121',
  userAgentType: 'cli',
  eventType: 'create-secret,update-secret',
  eventMetadata: 'secretKey=DATABASE_URL',
  startDate: '2026-03-01T00:00:00.000Z',
  endDate: '2026-03-02T23:59:59.000Z',
  offset: '0',
  limit: '50',
  // the change stream: resume after a revision
  since: '41',
  'last-event-id': '41',
  // the revision barrier: a write's Coffer-Revision, and how long to wait
  revision: '42',
  timeout: '30s',
  cursor: Buffer.from(`${TIME}|${OBJECT}`).toString('base64url'),
  // times
  createdAt: TIME,
  updatedAt: TIME,
  expiresAt: '2026-05-31T09:30:00.000Z',
  // the entry point (GET /)
  message: 'Ok',
  docs: '/api/docs',
  openapi: '/api/docs/openapi.json',
  status: '/api/status',
  bootstrap: '/api/v1/admin/bootstrap',
};
