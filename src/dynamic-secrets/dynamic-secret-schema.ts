import { z } from 'zod';
import type { DynamicSecret, DynamicSecretLease } from '../db/schema.ts';
import { duration, exactText, integer, optional, required } from '../validation/input.ts';

export const STATEMENT_MAX = 16_384;

/** The PostgreSQL provider's inputs, as Infisical's `sql-database` provider names them (client `postgres` only). */
export const postgresInputsSchema = z.object({
  client: z.literal('postgres').describe('The database kind: `postgres` (the one Coffer supports).'),
  host: required(253).describe("The PostgreSQL server's host name or address."),
  port: integer(1, 65_535).describe("The server's port."),
  database: required(63).describe('The database to connect to.'),
  username: required(63).describe('The admin role that runs the statements.'),
  password: exactText(1024).describe("The admin role's password (stored encrypted; never returned)."),
  creationStatement: exactText(STATEMENT_MAX).min(1).describe('Creates the lease role: `{{username}}`, `{{password}}` and `{{expiration}}` are filled in.'),
  revocationStatement: exactText(STATEMENT_MAX).min(1).describe('Removes the lease role (`{{username}}`).'),
  renewStatement: optional(exactText(STATEMENT_MAX)).describe('Extends the role at renewal (`{{username}}`, `{{expiration}}`); none: nothing runs.'),
  ca: optional(exactText(16_384)).describe('A PEM CA certificate: the connection then uses TLS verified against it.'),
});
export type PostgresInputs = z.infer<typeof postgresInputsSchema>;

export const providerSchema = z.object({
  type: z.literal('sql-database').describe('The provider: `sql-database` (PostgreSQL).'),
  inputs: postgresInputsSchema,
});

export const ttlSchema = duration().describe('A duration such as `30m`, `1h` or `1d`.');
export const dynamicSecretName = required(64).describe("The dynamic secret's name, unique in its folder.");

/** A dynamic secret as the API shows it: never its admin password or CA. */
export const dynamicSecretSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number(),
  type: z.string(),
  defaultTTL: z.string(),
  maxTTL: z.string().nullable(),
  folderId: z.string(),
  status: z.string().nullable(),
  statusDetails: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type DynamicSecretResponse = z.infer<typeof dynamicSecretSchema>;

/** The inputs as shown: everything but the admin password and CA. */
export const visibleInputsSchema = z.object({
  client: z.string(),
  host: z.string(),
  port: z.number(),
  database: z.string(),
  username: z.string(),
  creationStatement: z.string(),
  revocationStatement: z.string(),
  renewStatement: z.string().optional(),
});

export const leaseSchema = z.object({
  id: z.string(),
  version: z.number(),
  externalEntityId: z.string(),
  expireAt: z.date(),
  status: z.string().nullable(),
  statusDetails: z.string().nullable(),
  dynamicSecretId: z.string(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type LeaseResponse = z.infer<typeof leaseSchema>;

export const leaseDataSchema = z.object({ DB_USERNAME: z.string(), DB_PASSWORD: z.string() });

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
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toLeaseResponse(row: DynamicSecretLease): LeaseResponse {
  return {
    id: row.id,
    version: row.version,
    externalEntityId: row.externalEntityId,
    expireAt: new Date(row.expireAt),
    status: row.status,
    statusDetails: row.statusDetails,
    dynamicSecretId: row.dynamicSecretId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
