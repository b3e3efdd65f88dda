const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_557_600_000 };

/** The longest duration a request may give: 100 years (past it an end time would not even be a date). */
export const MAX_DURATION_MS = 100 * UNIT_MS.y!;

/** An ms-style duration ("30m", "1h", "7d", "2w"; a bare number is milliseconds) in milliseconds, or undefined; positive, at most 100 years. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|y)?$/i.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[(match[2] ?? 'ms').toLowerCase()]!;
  return Number.isFinite(ms) && ms > 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}
