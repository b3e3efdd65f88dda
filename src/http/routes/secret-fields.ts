import { z } from 'zod';
import { rawSecretSchema } from '../../secrets/secret-schema.ts';
import { flag, id, optional, path, projectRefFields, required, text } from '../../validation/input.ts';

/** Request fields shared by the v3 and v4 secret routes (one definition, two spellings of the API). */

export const nameParams = z.object({ secretName: text(2048) });
export const secretType = optional(z.enum(['shared', 'personal'])).transform((value) => value ?? 'shared');
export const tagIds = z.array(id()).optional();
export const reminder = {
  secretReminderNote: z.string().max(1024).nullable().optional(),
  secretReminderRepeatDays: z.number().int().min(1).max(365).nullable().optional(),
};
/** `null` as the reference's v4 routes allow: the stored setting (or false) stays. */
export const skipMultilineEncoding = z
  .boolean()
  .nullable()
  .optional()
  .transform((value) => value ?? undefined);

/** Where a secret write applies: the project by id or slug (any spelling), environment and path. */
export const secretLocation = { ...projectRefFields, environment: required(), secretPath: path() };

/** The query of a listing or a single read; `defaults` are the API version's own. */
export function readQuery(defaults: { includeImports: boolean; expandSecretReferences: boolean }) {
  return {
    ...projectRefFields,
    environment: required(),
    secretPath: path(),
    include_imports: optional(z.enum(['true', 'false'])),
    includeImports: optional(z.enum(['true', 'false'])),
    expandSecretReferences: flag(defaults.expandSecretReferences),
  };
}

/** `include_imports` (v3) or `includeImports` (v4), whichever is given, else the version's default. */
export function includeImportsOf(query: { include_imports?: 'true' | 'false'; includeImports?: 'true' | 'false' }, fallback: boolean): boolean {
  const given = query.includeImports ?? query.include_imports;
  return given === undefined ? fallback : given === 'true';
}

export const secretResponse = { 200: z.object({ secret: rawSecretSchema }) };

const secretKey = text(2048);

/** The bodies of single-secret writes (v3 `/raw/{name}` and v4 `/{name}`). */
export const createSecretBody = z.object({
  ...secretLocation,
  secretValue: z.string(),
  secretComment: z.string().default(''),
  skipMultilineEncoding,
  type: secretType,
  tagIds,
  ...reminder,
});
export const updateSecretBody = z.object({
  ...secretLocation,
  secretValue: z.string().optional(),
  secretComment: z.string().optional(),
  skipMultilineEncoding,
  newSecretName: optional(secretKey),
  type: secretType,
  tagIds,
  metadata: z.record(z.string(), z.string()).optional(),
  ...reminder,
});
export const deleteSecretBody = z.object({ ...secretLocation, type: secretType });

/** The bodies of batch writes (v3 `/batch/raw` and v4 `/batch`): all items or none. */
export const createSecretsBody = z.object({
  ...secretLocation,
  secrets: z.array(z.object({ secretKey, secretValue: z.string(), secretComment: z.string().optional(), skipMultilineEncoding, tagIds })).min(1),
});
export const updateSecretsBody = z.object({
  ...secretLocation,
  secrets: z
    .array(
      z.object({
        secretKey,
        secretValue: z.string().optional(),
        secretComment: z.string().optional(),
        skipMultilineEncoding,
        newSecretName: optional(secretKey),
        tagIds,
        ...reminder,
      }),
    )
    .min(1),
});
export const deleteSecretsBody = z.object({ ...secretLocation, secrets: z.array(z.object({ secretKey, type: secretType })).min(1) });
