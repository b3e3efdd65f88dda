import { BadRequestError } from '../errors.ts';

/**
 * A receiver's URL as given: absolute http(s), without credentials in it (they would show in listings; deliveries are
 * signed instead). Refused with 400 `code`, naming the request's `field`.
 */
export function receiverUrl(raw: string, field: string, code: string): string {
  const invalid = () => new BadRequestError(`${field} must be an absolute http or https URL`, code);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid();
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid();
  if (url.username || url.password) throw new BadRequestError(`${field} must not carry credentials: deliveries are signed`, code);
  return url.toString();
}

/** The delay before the next attempt after `failures` failed ones in a row: `firstMs`, doubling, at most `maxMs`. */
export function retryDelay(failures: number, firstMs: number, maxMs: number): number {
  return Math.min(firstMs * 2 ** (failures - 1), maxMs);
}
