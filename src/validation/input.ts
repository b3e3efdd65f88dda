import { z } from 'zod';

/**
 * What a query-string or body field may hold, defined once for every route.
 *
 * Infisical's clients send optional values they do not have as empty strings
 * (`workspaceSlug=` beside `workspaceId`, `directory=`); the reference treats
 * an empty optional value as absent, and so does every `optional(...)` here.
 * Text never holds NUL or a lone UTF-16 surrogate (PostgreSQL text cannot
 * store them): such input is a 422 naming the field, never a database error.
 */

/** NUL, or a UTF-16 surrogate half without its partner. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_MESSAGE = 'must not contain NUL or unpaired surrogate characters';

export const ID_MAX = 256;
export const PATH_MAX = 4096;

/** Trimmed text of at most `max` characters that PostgreSQL can store. */
export function text(max = 1024) {
  return z.string().trim().max(max).refine((value) => !UNSTORABLE.test(value), UNSTORABLE_MESSAGE);
}

/** A value that must be there: non-empty trimmed text. */
export function required(max = ID_MAX) {
  return text(max).min(1);
}

/** An id or slug naming a resource; an unknown one is the service's 404, not a validation error. */
export function id() {
  return required(ID_MAX);
}

/** A folder path (`secretPath`, `path`, `directory`); "/" when absent or empty. */
export function path() {
  return optional(text(PATH_MAX))
    .transform((value) => value ?? '/')
    .describe('A folder path such as `/app/db`; `/` (the environment\'s root) when absent. A missing leading `/` is added, a trailing one removed.');
}

/** The environment a request acts in, by slug. */
export function environmentSlug() {
  return required().describe("The environment's slug (`dev`, `staging`, `prod` …).");
}

/** An optional field: absent, null-free and empty are all "not given". Keeps the inner schema's description and examples. */
export function optional<T extends z.ZodType<unknown, string>>(schema: T) {
  const field = z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value))
    .pipe(schema.optional());
  const meta = schema.meta();
  if (!meta) return field;
  // zod leaves `examples` of a transformed input out of its JSON schema; `example` stays
  return field.meta(Array.isArray(meta.examples) ? { ...meta, example: meta.examples[0] } : meta);
}

/** An optional boolean query parameter, "true" or "false"; absent or empty means `fallback`. */
export function flag(fallback: boolean) {
  return z
    .enum(['true', 'false', ''])
    .optional()
    .transform((value) => (value === 'true' ? true : value === 'false' ? false : fallback));
}

/** A comma-separated query list: trimmed, empty pieces dropped; absent or empty means none. */
export function commaList(max = 4096) {
  return optional(text(max)).transform((value) => value?.split(',').map((item) => item.trim()).filter(Boolean) ?? []);
}

/** An optional query number; absent or empty means not given. */
export function optionalInteger(min: number, max = 2_147_483_647) {
  return optional(z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number).pipe(z.number().int().min(min).max(max)));
}

/** The fields that name a project, in every spelling the reference accepts. */
export const projectRefFields = {
  workspaceId: optional(id()).describe('The project\'s id, as the older clients name it; the same as `projectId`.'),
  projectId: optional(id()).describe('The project\'s id. Give it, `workspaceId`, `projectSlug` or `workspaceSlug`.'),
  workspaceSlug: optional(id()).describe('The project\'s slug, as the older clients name it; the same as `projectSlug` (used when no id is given).'),
  projectSlug: optional(id()).describe('The project\'s slug (used when no id is given).'),
};

export interface ProjectRefInput {
  workspaceId?: string;
  projectId?: string;
  workspaceSlug?: string;
  projectSlug?: string;
}

/** The project a request names: by id (`projectId` or `workspaceId`), else by slug (`projectSlug` or `workspaceSlug`). */
export function projectRef(fields: ProjectRefInput): { workspaceId?: string; projectSlug?: string } {
  const workspaceId = fields.projectId ?? fields.workspaceId;
  if (workspaceId !== undefined) return { workspaceId };
  return { projectSlug: fields.projectSlug ?? fields.workspaceSlug };
}

/** A required project id, as `projectId` or `workspaceId`: an object refinement for bodies and queries. */
export const projectIdFields = {
  workspaceId: optional(id()).describe('The project\'s id, as the older clients name it; the same as `projectId`.'),
  projectId: optional(id()).describe('The project\'s id (or give `workspaceId`).'),
};

export function hasProjectId(fields: { workspaceId?: string; projectId?: string }): boolean {
  return (fields.projectId ?? fields.workspaceId) !== undefined;
}

export const projectIdRequired = { message: 'Required: projectId (or workspaceId)', path: ['projectId'] };

/** The project id of a request checked with `hasProjectId`. */
export function projectIdOf(fields: { workspaceId?: string; projectId?: string }): string {
  return (fields.projectId ?? fields.workspaceId)!;
}
