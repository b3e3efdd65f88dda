import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header a delivery's signature travels in. */
export const SIGNATURE_HEADER = 'x-coffer-signature';

/** `t=<milliseconds since the epoch>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the body and the time it was sent, signed together. */
export function signDelivery(secretKey: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${hmac(secretKey, timestamp, body)}`;
}

/**
 * Whether a signature header is the key's signature of `body`, sent within `toleranceMs` of `now` (the receiver's
 * side of the recipe in the README).
 */
export function verifyDelivery(secretKey: string, header: string, body: string, now: number, toleranceMs = 5 * 60_000): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isSafeInteger(timestamp) || Math.abs(now - timestamp) > toleranceMs || typeof parts.v1 !== 'string') return false;
  const expected = Buffer.from(hmac(secretKey, timestamp, body), 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function hmac(secretKey: string, timestamp: number, body: string): string {
  return createHmac('sha256', secretKey).update(`${timestamp}.${body}`).digest('hex');
}
