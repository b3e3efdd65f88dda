import { z } from 'zod';
import { BadRequestError } from '../errors.ts';

export const SECRET_KEY_MAX = 500;

export const tagSummarySchema = z.object({ id: z.string(), slug: z.string(), name: z.string(), color: z.string().nullable() });
export type TagSummary = z.infer<typeof tagSummarySchema>;

export const rawSecretSchema = z.object({
  id: z.string(),
  _id: z.string(),
  workspace: z.string(),
  environment: z.string(),
  version: z.number(),
  type: z.enum(['shared', 'personal']),
  secretKey: z.string(),
  secretValue: z.string(),
  secretComment: z.string(),
  secretReminderNote: z.string().nullable(),
  secretReminderRepeatDays: z.number().nullable(),
  skipMultilineEncoding: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  tags: z.array(tagSummarySchema),
});
export type RawSecret = z.infer<typeof rawSecretSchema>;

export const listedSecretSchema = rawSecretSchema.extend({ secretPath: z.string() });
export type ListedSecret = z.infer<typeof listedSecretSchema>;

export const importedGroupSchema = z.object({
  secretPath: z.string(),
  environment: z.string(),
  folderId: z.string().nullable(),
  secrets: z.array(rawSecretSchema.omit({ createdAt: true, updatedAt: true })),
});
export type ImportedGroup = z.infer<typeof importedGroupSchema>;

const sealedField = (name: string) => ({
  [`${name}Ciphertext`]: z.string(),
  [`${name}IV`]: z.string(),
  [`${name}Tag`]: z.string(),
});

/** The reference's encrypted secret form: each field as base64 ciphertext, IV and GCM tag. */
export const encryptedSecretSchema = z.object({
  id: z.string(),
  version: z.number(),
  type: z.enum(['shared', 'personal']),
  ...sealedField('secretKey'),
  ...sealedField('secretValue'),
  ...sealedField('secretComment'),
  secretReminderNote: z.string().nullable(),
  secretReminderRepeatDays: z.number().nullable(),
  skipMultilineEncoding: z.boolean(),
  algorithm: z.string(),
  keyEncoding: z.string(),
  metadata: z.unknown().nullable(),
  userId: z.string().nullable(),
  folderId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  tags: z.array(tagSummarySchema),
});

/** Secret names are trimmed; 1 to 500 characters. */
export function normalizeSecretKey(name: string): string {
  const key = name.trim();
  if (key.length === 0) throw new BadRequestError('Secret name must not be empty', 'InvalidSecretName');
  if (key.length > SECRET_KEY_MAX) {
    throw new BadRequestError(`Secret name must be at most ${SECRET_KEY_MAX} characters`, 'InvalidSecretName');
  }
  return key;
}

/** As the reference: surrounding whitespace is trimmed, but a trailing newline is kept as one "\n". */
export function normalizeSecretValue(value: string): string {
  const trimmed = value.trim();
  return value.endsWith('\n') ? `${trimmed}\n` : trimmed;
}

/** What v4 answers in place of a value the caller asked not to see (`viewSecretValue=false`). */
export const HIDDEN_SECRET_VALUE = '<hidden-by-infisical>';

/** A secret as the v4 API shows it: with `secretValueHidden`, its value masked unless `view`. */
export function withValueVisibility<T extends { secretValue: string }>(secret: T, view: boolean): T & { secretValueHidden: boolean } {
  return view ? { ...secret, secretValueHidden: false } : { ...secret, secretValue: HIDDEN_SECRET_VALUE, secretValueHidden: true };
}
