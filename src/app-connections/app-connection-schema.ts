import { z } from 'zod';
import type { AppConnection } from '../db/schema.ts';
import { exactText, id, integer, optional, slug, text } from '../validation/input.ts';

export const POSTGRES_APP = 'postgres';
export const USERNAME_AND_PASSWORD = 'username-and-password';

/** What a PostgreSQL connection stores about its server, without the password. */
export const postgresConnectionDetailsSchema = z.object({
  host: text(255)
    .min(1, 'must not be empty')
    .meta({ examples: ['orders-db.internal'] })
    .describe("The server's host name or IP address."),
  port: integer(1, 65535).default(5432).describe("The server's port (5432 when absent)."),
  database: text(63)
    .min(1, 'must not be empty')
    .meta({ examples: ['orders'] })
    .describe('The database to connect to.'),
  username: text(63)
    .min(1, 'must not be empty')
    .meta({ examples: ['coffer_rotator'] })
    .describe("The role Coffer signs in as: it must be allowed to change the rotated roles' passwords."),
  sslEnabled: z.boolean().default(false).describe('Connect with TLS.'),
  sslRejectUnauthorized: z.boolean().default(true).describe('With TLS, refuse a server certificate that does not verify.'),
  sslCertificate: optional(text(16_384)).describe('A CA certificate (PEM) the server certificate must chain to.'),
});

export const postgresCredentialsInputSchema = postgresConnectionDetailsSchema.extend({
  password: exactText(1024)
    .min(1, 'must not be empty')
    .meta({ examples: ['the-rotator-password'] })
    .describe("The connection role's password: stored encrypted, never returned."),
});
export type PostgresCredentialsInput = z.infer<typeof postgresCredentialsInputSchema>;

export const createPostgresConnectionSchema = z.object({
  name: slug({ max: 32 })
    .meta({ examples: ['orders-db'] })
    .describe("The connection's name: unique in the project, lowercase letters, digits and hyphens."),
  description: optional(text(256).nullable()).describe('What the connection is for.'),
  projectId: id().describe('The project the connection belongs to: only its rotations may use it.'),
  method: z.literal(USERNAME_AND_PASSWORD).default(USERNAME_AND_PASSWORD).describe('How Coffer signs in: `username-and-password`.'),
  credentials: postgresCredentialsInputSchema.describe('Where the server is and how Coffer signs in.'),
});
export type CreatePostgresConnectionInput = z.infer<typeof createPostgresConnectionSchema>;

export const updatePostgresConnectionSchema = z.object({
  name: optional(slug({ max: 32 }).meta({ examples: ['orders-db'] })).describe('A new name.'),
  description: optional(text(256).nullable()).describe('A new description.'),
  credentials: optional(postgresCredentialsInputSchema).describe('New credentials, checked by signing in before they are stored.'),
});
export type UpdatePostgresConnectionInput = z.infer<typeof updatePostgresConnectionSchema>;

export const appConnectionSchema = z.object({
  id: z.string(),
  name: z.string().meta({ examples: ['orders-db'] }),
  description: z.string().nullable(),
  version: z.number().meta({ examples: [1] }),
  projectId: z.string(),
  app: z.literal(POSTGRES_APP),
  method: z.literal(USERNAME_AND_PASSWORD),
  credentials: postgresConnectionDetailsSchema.extend({ sslCertificate: z.string().nullable() }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AppConnectionResponse = z.infer<typeof appConnectionSchema>;

export function toAppConnectionResponse(row: AppConnection, credentials: PostgresCredentialsInput): AppConnectionResponse {
  const { password: _password, ...details } = credentials;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    version: row.version,
    projectId: row.projectId,
    app: POSTGRES_APP,
    method: USERNAME_AND_PASSWORD,
    credentials: { ...details, sslCertificate: details.sslCertificate ?? null },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
