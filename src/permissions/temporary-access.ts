import { z } from 'zod';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_557_600_000 };

/** The longest temporary access: 100 years (past it an end time would not even be a date). */
export const MAX_TEMPORARY_RANGE_MS = 100 * UNIT_MS.y!;

/** An ms-style duration ("30m", "1h", "7d", "2w"; a bare number is milliseconds) in milliseconds, or undefined; at most 100 years. */
export function parseDuration(range: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|y)?$/i.exec(range.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[(match[2] ?? 'ms').toLowerCase()]!;
  return Number.isFinite(ms) && ms > 0 && ms <= MAX_TEMPORARY_RANGE_MS ? ms : undefined;
}

export const temporaryRangeSchema = z
  .string()
  .trim()
  .refine((range) => parseDuration(range) !== undefined, 'must be a positive duration such as 30m, 1h or 7d, at most 100 years');

/** The temporary-access fields the reference accepts for roles and privileges. */
export const temporaryAccessFields = {
  temporaryMode: z.literal('relative').describe('Always `relative`: access lasts `temporaryRange` from `temporaryAccessStartTime`.'),
  temporaryRange: temporaryRangeSchema.describe('How long the access lasts, such as `30m`, `1h` or `7d`.'),
  temporaryAccessStartTime: z.iso.datetime({ offset: true }).describe('When the access starts (ISO 8601).'),
};

export interface TemporaryAccess {
  isTemporary: boolean;
  temporaryMode: string | null;
  temporaryRange: string | null;
  temporaryAccessStartTime: Date | null;
  temporaryAccessEndTime: Date | null;
}

export const PERMANENT: TemporaryAccess = {
  isTemporary: false,
  temporaryMode: null,
  temporaryRange: null,
  temporaryAccessStartTime: null,
  temporaryAccessEndTime: null,
};

/** Start + range; access ends at the end time without anyone acting. */
export function temporaryAccess(input: { temporaryMode: string; temporaryRange: string; temporaryAccessStartTime: string }): TemporaryAccess {
  const start = new Date(input.temporaryAccessStartTime);
  return {
    isTemporary: true,
    temporaryMode: input.temporaryMode,
    temporaryRange: input.temporaryRange,
    temporaryAccessStartTime: start,
    temporaryAccessEndTime: new Date(start.getTime() + parseDuration(input.temporaryRange)!),
  };
}

export function temporaryAccessResponse(row: TemporaryAccess) {
  return {
    isTemporary: row.isTemporary,
    temporaryMode: row.temporaryMode,
    temporaryRange: row.temporaryRange,
    temporaryAccessStartTime: row.temporaryAccessStartTime?.toISOString() ?? null,
    temporaryAccessEndTime: row.temporaryAccessEndTime?.toISOString() ?? null,
  };
}

export const temporaryAccessResponseSchema = {
  isTemporary: z.boolean(),
  temporaryMode: z.string().nullable(),
  temporaryRange: z.string().nullable(),
  temporaryAccessStartTime: z.string().nullable(),
  temporaryAccessEndTime: z.string().nullable(),
};
