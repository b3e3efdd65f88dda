import { z } from 'zod';
import { rawSecretSchema, SECRET_KEY_MAX } from '../../secrets/secret-schema.ts';
import { environmentSlug, exactText, flag, id, integer, optional, path, projectRefFields, required, secretText, stringRecord } from '../../validation/input.ts';
import { changes, type OperationDoc, projectPermission, reads } from '../docs/operation-doc.ts';
import type { ProposedWrite } from '../../approvals/approval-request-service.ts';

/** Request fields and operation docs shared by the v3 and v4 secret routes (one definition, two spellings of the API). */

const secretKeyText = `The secret's name (key), such as \`DATABASE_URL\`, at most ${SECRET_KEY_MAX} characters.`;
const secretKey = required(SECRET_KEY_MAX).describe(secretKeyText);

export const nameParams = z.object({ secretName: secretKey.describe(`${secretKeyText} URL-encode it in the path.`) });
export const secretType = optional(z.enum(['shared', 'personal']))
  .transform((value) => value ?? 'shared')
  .describe("`shared` (default): the secret everyone with access sees; `personal`: the calling user's own override of it (users only).");
export const tagIds = z.array(id()).optional().describe("Ids of the project's tags to put on the secret (replaces its tags).");
export const reminder = {
  secretReminderNote: exactText(1024)
    .nullable()
    .optional()
    .describe('A note shown with the reminder to rotate the secret (kept for compatibility; Coffer sends no reminders).'),
  secretReminderRepeatDays: integer(1, 365)
    .nullable()
    .optional()
    .describe('Days between rotation reminders, 1 to 365 (kept for compatibility; Coffer sends no reminders).'),
};
/** `null` as the reference's v4 routes allow: the stored setting (or false) stays. */
export const skipMultilineEncoding = z
  .boolean()
  .nullable()
  .optional()
  .transform((value) => value ?? undefined)
  .describe('Whether clients should leave a multi-line value as it is when they export it (stored and returned, not used by the server).');

/** Where a secret write applies: the project by id or slug (any spelling), environment and path. */
export const secretLocation = { ...projectRefFields, environment: environmentSlug(), secretPath: path() };

const includeImportsText = (fallback: boolean) =>
  `\`true\`: the secrets of the imported environments and paths are listed too (in \`imports\`, or used for a single read). Default: ${fallback}.`;

/** The query of a listing or a single read; `defaults` are the API version's own. */
export function readQuery(defaults: { includeImports: boolean; expandSecretReferences: boolean }) {
  return {
    ...projectRefFields,
    environment: environmentSlug(),
    secretPath: path(),
    include_imports: optional(z.enum(['true', 'false'])).describe(`${includeImportsText(defaults.includeImports)} The v3 spelling of \`includeImports\`.`),
    includeImports: optional(z.enum(['true', 'false'])).describe(includeImportsText(defaults.includeImports)),
    expandSecretReferences: flag(defaults.expandSecretReferences).describe(
      `\`true\`: references such as \`\${OTHER_KEY}\` or \`\${prod.app.KEY}\` in values are replaced by what they name (the caller must be able to read it). Default: ${defaults.expandSecretReferences}.`,
    ),
  };
}

/** `include_imports` (v3) or `includeImports` (v4), whichever is given, else the version's default. */
export function includeImportsOf(query: { include_imports?: 'true' | 'false'; includeImports?: 'true' | 'false' }, fallback: boolean): boolean {
  const given = query.includeImports ?? query.include_imports;
  return given === undefined ? fallback : given === 'true';
}

export const secretResponse = { 200: z.object({ secret: rawSecretSchema }) };

const secretValue = secretText().describe(
  'The value, kept exactly (NUL included; surrounding whitespace is trimmed, as the reference does). Stored encrypted; never logged or audited.',
);
const secretComment = secretText().describe('A comment kept with the secret (encrypted like the value).');

/** The bodies of single-secret writes (v3 `/raw/{name}` and v4 `/{name}`). */
export const createSecretBody = z.object({
  ...secretLocation,
  secretValue,
  secretComment: secretComment.default(''),
  skipMultilineEncoding,
  type: secretType,
  tagIds,
  ...reminder,
});
export const updateSecretBody = z.object({
  ...secretLocation,
  secretValue: secretValue.optional(),
  secretComment: secretComment.optional(),
  skipMultilineEncoding,
  newSecretName: optional(secretKey).describe('A new name for the secret (it keeps its versions).'),
  type: secretType,
  tagIds,
  metadata: stringRecord().optional().describe('Accepted for compatibility and ignored: Coffer keeps no secret metadata.'),
  ...reminder,
});
export const deleteSecretBody = z.object({ ...secretLocation, type: secretType });

/** The bodies of batch writes (v3 `/batch/raw` and v4 `/batch`): all items or none. */
export const createSecretsBody = z.object({
  ...secretLocation,
  secrets: z
    .array(z.object({ secretKey, secretValue, secretComment: secretComment.optional(), skipMultilineEncoding, tagIds }).describe('One secret to create.'))
    .min(1)
    .describe('The secrets to create, all in the same environment and path.'),
});
export const updateSecretsBody = z.object({
  ...secretLocation,
  secrets: z
    .array(
      z
        .object({
          secretKey,
          secretValue: secretValue.optional(),
          secretComment: secretComment.optional(),
          skipMultilineEncoding,
          newSecretName: optional(secretKey).describe('A new name for the secret.'),
          tagIds,
          ...reminder,
        })
        .describe('One secret to change; fields left out keep their value.'),
    )
    .min(1)
    .describe('The secrets to update, all in the same environment and path.'),
});
export const deleteSecretsBody = z.object({
  ...secretLocation,
  secrets: z
    .array(z.object({ secretKey, type: secretType }).describe('One secret to delete.'))
    .min(1)
    .describe('The secrets to delete, all in the same environment and path.'),
});

/** A batch's secrets as the writes a change request would hold. */
export function proposedWrites(op: ProposedWrite['op'], items: readonly ({ secretKey: string } & Omit<ProposedWrite, 'op' | 'secretName'>)[]): ProposedWrite[] {
  return items.map((item) => ({ ...item, op, secretName: item.secretKey }));
}

const protectedBatch =
  "A user's batch of shared secrets at a place an approval policy protects writes nothing: it answers `{approval}`, one change request holding every secret of the batch (a batch that mixes shared and personal secrets there is refused, 400 `BatchNeedsSplit`).";

const sharedGoesWithOverrides = 'Deleting a shared secret deletes the personal overrides of it too.';

/** What the secret operations do, the same in v3 and v4 (the v4 routes add their defaults). */
export const secretDocs = {
  list: {
    summary: 'List secrets',
    description:
      'The secrets of an environment at a path, decrypted: with `recursive`, of every folder below too (depth 20; folders the caller may not read are left out); with imports, the secrets of the imported places in `imports`; optionally only those carrying all of `tagSlugs`. A user sees their personal overrides in place of the shared values.',
    permission: projectPermission('read', 'secrets', 'path'),
    effects: reads('get-secrets'),
  },
  get: {
    summary: 'Get a secret',
    description: 'One secret by name at an environment and path, decrypted; at a past `version`, or found through the imports when it is not at the path itself.',
    permission: projectPermission('read', 'secrets', 'path'),
    effects: reads('get-secret'),
  },
  create: {
    summary: 'Create a secret',
    description:
      "Creates a secret at an environment and path (the folder must exist). A `personal` secret is the calling user's override of an existing shared one. References in the value must name secrets the caller may read. Integrations reading the path get the new secret at once.",
    permission: projectPermission('create', 'secrets', 'path'),
    effects: changes('Creates the secret (version 1).', 'create-secret'),
    errors: [400],
  },
  update: {
    summary: 'Update a secret',
    description:
      "Changes a secret's value, comment, tags or name (`newSecretName`); fields left out keep their value. Any change makes a new version, and Integrations reading the path are updated at once. An update that stores what is there already (every field as stored) changes nothing: the secret is answered as it is, with no new version, no audit entry, no change-feed row and no `Coffer-Revision` header.",
    permission: projectPermission('edit', 'secrets', 'path'),
    effects: changes('Updates the secret and adds a version, when anything differs from what is stored.', 'update-secret'),
    errors: [400],
  },
  delete: {
    summary: 'Delete a secret',
    description: `Deletes a secret at an environment and path. ${sharedGoesWithOverrides} Integrations reading the path drop it at once.`,
    permission: projectPermission('delete', 'secrets', 'path'),
    effects: changes('Deletes the secret.', 'delete-secret'),
  },
  createMany: {
    summary: 'Create secrets (batch)',
    description: `Creates several secrets at one environment and path in one transaction: all of them, or none when one fails (a name taken, a reference not readable). ${protectedBatch}`,
    permission: projectPermission('create', 'secrets', 'path'),
    effects: changes('Creates the secrets.', 'create-secrets'),
    errors: [400],
  },
  updateMany: {
    summary: 'Update secrets (batch)',
    description: `Updates several secrets at one environment and path in one transaction: all of them, or none when one fails. A secret whose fields are sent as stored is left alone (answered as it is, no new version); when none changes, nothing is audited or recorded and no \`Coffer-Revision\` header is answered. ${protectedBatch}`,
    permission: projectPermission('edit', 'secrets', 'path'),
    effects: changes('Updates the secrets that differ from what is stored.', 'update-secrets'),
    errors: [400],
  },
  deleteMany: {
    summary: 'Delete secrets (batch)',
    description: `Deletes several secrets at one environment and path in one transaction: all of them, or none when one is missing. ${sharedGoesWithOverrides} ${protectedBatch}`,
    permission: projectPermission('delete', 'secrets', 'path'),
    effects: changes('Deletes the secrets.', 'delete-secrets'),
  },
} satisfies Record<string, OperationDoc>;

/** A v4 operation's doc: the v3 one, with what v4 does differently. */
export function v4Doc(doc: OperationDoc, differences: string): OperationDoc {
  return { ...doc, description: `${doc.description}\n\n${differences}` };
}
