import type { RotateAtUtc } from './rotation-schema.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * When a scheduled rotation runs next: `intervalDays` days after the UTC day of its last run, at `rotateAtUtc`.
 * A run late in its day does not drift the schedule; one that ran early never runs twice the same day.
 */
export function nextRotationAt(lastRunAt: Date, intervalDays: number, rotateAtUtc: RotateAtUtc): Date {
  const day = Date.UTC(lastRunAt.getUTCFullYear(), lastRunAt.getUTCMonth(), lastRunAt.getUTCDate());
  return new Date(day + intervalDays * DAY_MS + (rotateAtUtc.hours * 60 + rotateAtUtc.minutes) * 60_000);
}
