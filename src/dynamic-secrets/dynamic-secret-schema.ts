import { z } from 'zod';
import type { DynamicSecret, DynamicSecretLease } from '../db/schema.ts';
import { duration, exactText, integer, optional, required } from '../validation/input.ts';

export const STATEMENT_MAX = 16_384;

/** The PostgreSQL provider's inputs, as Infisical's `sql-database` provider names them (client `postgres` only). */
export const postgresInputsSchema = z.object({
  client: z.literal('postgres').describe('The database kind: `postgres` (the one Coffer supports).'),
  host: required(253)
    .describe("The PostgreSQL server's host name or address.")
    .meta({ examples: ['db.internal'] }),
  port: integer(1, 65_535)
    .describe("The server's port.")
    .meta({ examples: [5432] }),
  database: required(63)
    .describe('The database to connect to.')
    .meta({ examples: ['orders'] }),
  username: required(63)
    .describe('The admin role that runs the statements.')
    .meta({ examples: ['coffer_admin'] }),
  password: exactText(1024)
    .describe("The admin role's password (stored encrypted; never returned).")
    .meta({ examples: ['an admin password'] }),
  creationStatement: exactText(STATEMENT_MAX)
    .min(1)
    .describe('Creates the lease role: `{{username}}`, `{{password}}` and `{{expiration}}` are filled in.')
    .meta({ examples: [`CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`] }),
  revocationStatement: exactText(STATEMENT_MAX)
    .min(1)
    .describe('Removes the lease role (`{{username}}`).')
    .meta({ examples: ['DROP ROLE "{{username}}";'] }),
  renewStatement: optional(exactText(STATEMENT_MAX))
    .describe('Extends the role at renewal (`{{username}}`, `{{expiration}}`); none: nothing runs.')
    .meta({ examples: [`ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`] }),
  ca: optional(exactText(16_384))
    .describe('A PEM CA certificate: the connection then uses TLS verified against it.')
    .meta({ examples: ['-----BEGIN CERTIFICATE-----\\n…\\n-----END CERTIFICATE-----'] }),
});
export type PostgresInputs = z.infer<typeof postgresInputsSchema>;

export const providerSchema = z
  .object({
    type: z.literal('sql-database').describe('The provider: `sql-database` (PostgreSQL).'),
    inputs: postgresInputsSchema.describe('The admin connection and the statement templates (stored encrypted).'),
  })
  .describe('Which database the leases are made on, and how.');

export const ttlSchema = duration()
  .describe('A duration such as `30m`, `1h` or `1d`.')
  .meta({ examples: ['1h'] });
export const dynamicSecretName = required(64)
  .describe("The dynamic secret's name, unique in its folder.")
  .meta({ examples: ['orders-db'] });

/** A dynamic secret as the API shows it: never its admin password or CA. */
export const dynamicSecretSchema = z.object({
  id: z.string(),
  name: z.string().meta({ examples: ['orders-db'] }),
  version: z.number().meta({ examples: [1] }),
  type: z.string().meta({ examples: ['sql-database'] }),
  defaultTTL: z.string().meta({ examples: ['1h'] }),
  maxTTL: z
    .string()
    .nullable()
    .meta({ examples: ['1d'] }),
  folderId: z.string(),
  status: z
    .string()
    .nullable()
    .meta({ examples: [null] }),
  statusDetails: z
    .string()
    .nullable()
    .meta({ examples: [null] }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type DynamicSecretResponse = z.infer<typeof dynamicSecretSchema>;

/** The inputs as shown: everything but the admin password and CA. */
export const visibleInputsSchema = z.object({
  client: z.string().meta({ examples: ['postgres'] }),
  host: z.string().meta({ examples: ['db.internal'] }),
  port: z.number().meta({ examples: [5432] }),
  database: z.string().meta({ examples: ['orders'] }),
  username: z.string().meta({ examples: ['coffer_admin'] }),
  creationStatement: z.string().meta({ examples: [`CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`] }),
  revocationStatement: z.string().meta({ examples: ['DROP ROLE "{{username}}";'] }),
  renewStatement: z
    .string()
    .optional()
    .meta({ examples: [`ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`] }),
});

export const leaseSchema = z.object({
  id: z.string(),
  version: z.number().meta({ examples: [1] }),
  externalEntityId: z
    .string()
    .describe('The role the lease created.')
    .meta({ examples: ['coffer_5f0a7b1d932e5f0a7b1d93a1'] }),
  expireAt: z.string().meta({ examples: ['2026-03-02T10:30:00.000Z'] }),
  status: z
    .string()
    .nullable()
    .describe('`FailedDeletion` when its revocation was refused.')
    .meta({ examples: [null] }),
  statusDetails: z
    .string()
    .nullable()
    .meta({ examples: [null] }),
  dynamicSecretId: z.string().meta({ examples: ['4c6e8a0b-2d4f-4a6c-8e0b-7d9f1b3d5f24'] }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type LeaseResponse = z.infer<typeof leaseSchema>;

export const leaseDataSchema = z
  .object({
    DB_USERNAME: z.string().meta({ examples: ['coffer_5f0a7b1d932e5f0a7b1d93a1'] }),
    DB_PASSWORD: z.string().meta({ examples: ['9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0'] }),
  })
  .describe("The lease role's credentials, answered once.");

export function toDynamicSecretResponse(row: DynamicSecret): DynamicSecretResponse {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    type: row.type,
    defaultTTL: row.defaultTtl,
    maxTTL: row.maxTtl,
    folderId: row.folderId,
    status: null,
    statusDetails: null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toLeaseResponse(row: DynamicSecretLease): LeaseResponse {
  return {
    id: row.id,
    version: row.version,
    externalEntityId: row.externalEntityId,
    expireAt: new Date(row.expireAt).toISOString(),
    status: row.status,
    statusDetails: row.statusDetails,
    dynamicSecretId: row.dynamicSecretId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
