import { z } from 'zod';
import { parseDuration } from '../validation/duration.ts';
import { dateTime, duration } from '../validation/input.ts';

/** The temporary-access fields the reference accepts for roles and privileges. */
export const temporaryAccessFields = {
  temporaryMode: z.literal('relative').describe('Always `relative`: access lasts `temporaryRange` from `temporaryAccessStartTime`.'),
  temporaryRange: duration().describe('How long the access lasts, such as `30m`, `1h` or `7d`.'),
  temporaryAccessStartTime: dateTime().describe('When the access starts (ISO 8601).'),
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
