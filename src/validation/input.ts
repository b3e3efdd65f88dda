import { z } from 'zod';
import { MAX_DURATION_MS, parseDuration } from './duration.ts';

/**
 * What a request field may hold, defined once for every route: every string,
 * name, slug, path, integer and duration a route schema takes is built here.
 *
 * - Text never holds NUL or an unpaired UTF-16 surrogate: PostgreSQL text
 *   cannot store NUL, and UTF-8 cannot carry a lone surrogate (it would be
 *   stored as U+FFFD, silently changed). Secret values and comments, stored
 *   encrypted as bytes, may hold NUL and are kept exactly; they too refuse
 *   lone surrogates.
 * - Every string has a maximum length, every integer a range inside the
 *   32-bit `integer` columns, every duration a maximum.
 * - Such input is a 422 `ValidationFailure` naming the field.
 *
 * The rules are patterns and bounds, not hidden refinements, so the API
 * reference's JSON Schema states them, and test/api/input-rules.test.ts walks
 * every route's schema and fails for a field built without them.
 *
 * Infisical's clients send optional values they do not have as empty strings
 * (`workspaceSlug=` beside `workspaceId`, `directory=`); the reference treats
 * an empty optional value as absent, and so does every `optional(...)` here.
 */

/**
 * Text PostgreSQL can store: no NUL, no surrogate without its partner. The
 * pattern means the same with and without the `u` flag, so any JSON Schema
 * validator reading the API reference applies the same rule.
 */
export const STORABLE_TEXT = /^(?:[^\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
const STORABLE_MESSAGE = 'must not contain NUL or unpaired surrogate characters';

/** Text that UTF-8 carries unchanged: no surrogate without its partner (NUL allowed). */
export const WELL_FORMED_TEXT = /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
const WELL_FORMED_MESSAGE = 'must not contain unpaired surrogate characters';

/** Slugs: lowercase letters and digits in groups joined by single hyphens. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const slugMessage = 'must be lowercase letters, digits and single hyphens, without a leading or trailing hyphen';

export const TEXT_MAX = 1024;
export const ID_MAX = 256;
export const NAME_MAX = 64;
export const PATH_MAX = 4096;
export const EMAIL_MAX = 254;
export const PASSWORD_MAX = 1024;
/** A secret value or comment: 1 Mi characters (the 1 MiB request body limit holds it lower in practice). */
export const SECRET_TEXT_MAX = 1_048_576;

/** The `integer` columns' range. */
export const INT4_MIN = -2_147_483_648;
export const INT4_MAX = 2_147_483_647;
/** Positions in a list (environments, imports): from 1. */
export const POSITION_MAX = 1_000_000;

// ---- strings ----

/** Trimmed text of at most `max` characters that PostgreSQL can store. */
export function text(max = TEXT_MAX) {
  return z.string().trim().max(max, `must be at most ${max} characters`).regex(STORABLE_TEXT, STORABLE_MESSAGE);
}

/** Text kept exactly as sent (not trimmed), at most `max` characters, that PostgreSQL can store. */
export function exactText(max = TEXT_MAX) {
  return z.string().max(max, `must be at most ${max} characters`).regex(STORABLE_TEXT, STORABLE_MESSAGE);
}

/** A value that must be there: non-empty trimmed text. */
export function required(max = ID_MAX) {
  return text(max).min(1, 'must not be empty');
}

/** An id or slug naming a resource; an unknown one is the service's 404, not a validation error. */
export function id() {
  return required(ID_MAX);
}

/** A display name (project, environment, identity, role, organization): 1 to `max` characters. */
export function name(max = NAME_MAX) {
  return required(max);
}

/** A new slug: lowercase letters, digits and single hyphens, `min` to `max` characters; `lowercase` folds what is sent first. */
export function slug({ min = 1, max = NAME_MAX, lowercase = false }: { min?: number; max?: number; lowercase?: boolean } = {}) {
  const trimmed = z.string().trim();
  return (lowercase ? trimmed.toLowerCase() : trimmed)
    .min(min, `slug must be at least ${min} characters`)
    .max(max, `slug must be at most ${max} characters`)
    .regex(SLUG_PATTERN, `slug ${slugMessage}`);
}

/** A secret's value or comment: kept exactly as sent (no trimming here), NUL included; at most 1 Mi characters. */
export function secretText() {
  return z.string().max(SECRET_TEXT_MAX, `must be at most ${SECRET_TEXT_MAX} characters`).regex(WELL_FORMED_TEXT, WELL_FORMED_MESSAGE);
}

/** A password, kept exactly as typed: `min` to 1,024 characters. */
export function password(min: number) {
  return exactText(PASSWORD_MAX).min(min, `must be at least ${min} characters`);
}

export function email() {
  return z.email().max(EMAIL_MAX, `must be at most ${EMAIL_MAX} characters`);
}

/** An ISO 8601 date and time with any offset. */
export function dateTime() {
  return z.iso.datetime({ offset: true }).max(64, 'must be at most 64 characters');
}

/** An absolute URL of at most `max` characters. */
export function url(max = 2048) {
  return text(max).pipe(z.url());
}

/** A folder path (`secretPath`, `path`, `directory`); "/" when absent or empty. */
export function path() {
  return optional(text(PATH_MAX))
    .transform((value) => value ?? '/')
    .describe("A folder path such as `/app/db`; `/` (the environment's root) when absent. A missing leading `/` is added, a trailing one removed.");
}

/** The environment a request acts in, by slug. */
export function environmentSlug() {
  return required().describe("The environment's slug (`dev`, `staging`, `prod` …).");
}

/** A duration such as `30m`, `1h` or `7d` (ms-style; a bare number is milliseconds): positive, at most 100 years. */
export function duration() {
  return text(32).refine(
    (value) => parseDuration(value) !== undefined,
    `must be a positive duration such as 30m, 1h or 7d, at most ${MAX_DURATION_MS / 31_557_600_000} years`,
  );
}

/** An object of string keys and values (metadata kept for compatibility). */
export function stringRecord() {
  return z.record(exactText(ID_MAX), exactText(TEXT_MAX));
}

/** A number inside client-kept JSON: one JavaScript holds exactly. */
function jsonNumber() {
  return z.number().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
}

/**
 * JSON a client keeps with a record and reads back (integration options it
 * names itself): up to `depth` levels of arrays and objects, kept exactly;
 * its strings and keys are storable text.
 */
export function jsonValue(depth = 3): z.ZodType<unknown> {
  const scalars = [exactText(TEXT_MAX), jsonNumber(), z.boolean(), z.null()] as const;
  const error = `must be text (at most ${TEXT_MAX} characters), a number, true, false, null, or a list or object of these (${depth} levels deep at most; keys at most ${ID_MAX} characters), without NUL or unpaired surrogate characters`;
  if (depth === 0) return z.union(scalars, { error });
  const inner = jsonValue(depth - 1);
  return z.union([...scalars, z.array(inner), z.record(exactText(ID_MAX), inner)], { error });
}

const keyRule = `every key must be at most ${ID_MAX} characters, without NUL or unpaired surrogate characters`;

/** An object with the fields of `shape`, whose other keys hold client-kept JSON (`jsonValue`); every key is storable text. */
export function openObject<T extends z.ZodRawShape>(shape: T) {
  return z
    .object(shape)
    .catchall(jsonValue())
    .refine((value) => Object.keys(value).every((key) => key.length <= ID_MAX && STORABLE_TEXT.test(key)), keyRule)
    .meta({ propertyNames: { type: 'string', maxLength: ID_MAX, pattern: STORABLE_TEXT.source } });
}

// ---- numbers ----

/** A whole number from `min` to `max`, a range inside the `integer` columns. */
export function integer(min: number, max: number) {
  if (!(Number.isSafeInteger(min) && Number.isSafeInteger(max) && INT4_MIN <= min && min <= max && max <= INT4_MAX)) {
    throw new RangeError(`integer(${min}, ${max}): the range must lie inside ${INT4_MIN} to ${INT4_MAX}`);
  }
  return z.number().int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
}

/** A whole number for a `bigint` column (revisions): `min` to `max`, within what JavaScript holds exactly. */
export function bigInteger(min: number, max: number) {
  if (!(Number.isSafeInteger(min) && Number.isSafeInteger(max) && min <= max)) {
    throw new RangeError(`bigInteger(${min}, ${max}): the range must lie inside ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`);
  }
  return z.number().int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
}

/** How many times something may happen (uses, logins): 0 to 2^31 - 1. */
export function count() {
  return integer(0, INT4_MAX);
}

/** A number of seconds, `min` to `max`. */
export function seconds(min: number, max: number) {
  return integer(min, max);
}

/** A position in a list, from 1. */
export function position() {
  return integer(1, POSITION_MAX);
}

/** A number in a query, header or path, given as digits. Past 2^31 - 1 only for `bigint` columns. */
export function digitsInteger(min: number, max = INT4_MAX) {
  const digits = Math.max(String(min).length, String(max).length);
  return z
    .string()
    .max(digits, `must be at most ${max}`)
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(max > INT4_MAX ? bigInteger(min, max) : integer(min, max));
}

/** An optional number in a query or header, given as digits; absent or empty means not given. Past 2^31 - 1 only for `bigint` columns. */
export function optionalInteger(min: number, max = INT4_MAX) {
  return optional(digitsInteger(min, max));
}

// ---- optional values and lists ----

/** An optional field: absent and empty both mean "not given". Its JSON Schema (and the API reference) is the inner schema's. */
export function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

/** An optional boolean query parameter, "true" or "false"; absent or empty means `fallback`. */
export function flag(fallback: boolean) {
  return z
    .enum(['true', 'false', ''])
    .optional()
    .transform((value) => (value === 'true' ? true : value === 'false' ? false : fallback));
}

/** A comma-separated query list: trimmed, empty pieces dropped; absent or empty means none. */
export function commaList(max = PATH_MAX) {
  return optional(text(max)).transform(
    (value) =>
      value
        ?.split(',')
        .map((item) => item.trim())
        .filter(Boolean) ?? [],
  );
}

// ---- the fields that name a project ----

/** The fields that name a project, in every spelling the reference accepts. */
export const projectRefFields = {
  workspaceId: optional(id()).describe("The project's id, as the older clients name it; the same as `projectId`."),
  projectId: optional(id()).describe("The project's id. Give it, `workspaceId`, `projectSlug` or `workspaceSlug`."),
  workspaceSlug: optional(id()).describe("The project's slug, as the older clients name it; the same as `projectSlug` (used when no id is given)."),
  projectSlug: optional(id()).describe("The project's slug (used when no id is given)."),
};

export interface ProjectRefInput {
  workspaceId?: string;
  projectId?: string;
  workspaceSlug?: string;
  projectSlug?: string;
}

/** The project a request names: by id (`projectId` or `workspaceId`), else by slug (`projectSlug` or `workspaceSlug`). */
export function projectRef(fields: ProjectRefInput): { projectId?: string; projectSlug?: string } {
  const projectId = fields.projectId ?? fields.workspaceId;
  if (projectId !== undefined) return { projectId };
  return { projectSlug: fields.projectSlug ?? fields.workspaceSlug };
}

/** A required project id, as `projectId` or `workspaceId`: an object refinement for bodies and queries. */
export const projectIdFields = {
  workspaceId: optional(id()).describe("The project's id, as the older clients name it; the same as `projectId`."),
  projectId: optional(id()).describe("The project's id (or give `workspaceId`)."),
};

export function hasProjectId(fields: { workspaceId?: string; projectId?: string }): boolean {
  return (fields.projectId ?? fields.workspaceId) !== undefined;
}

export const projectIdRequired = { message: 'Required: projectId (or workspaceId)', path: ['projectId'] };

/** The project id of a request checked with `hasProjectId`. */
export function projectIdOf(fields: { workspaceId?: string; projectId?: string }): string {
  return (fields.projectId ?? fields.workspaceId)!;
}
