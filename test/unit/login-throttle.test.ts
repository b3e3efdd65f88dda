import { describe, expect, test } from 'vitest';
import type { ThrottleRow } from '../../src/auth/login-throttle-store.ts';
import { addressOf, afterFailure, DEFAULT_LOGIN_LIMITS, pairLimit, throttleKeys } from '../../src/auth/login-throttle.ts';

const limits = DEFAULT_LOGIN_LIMITS;
const t0 = new Date('2026-03-01T10:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const fresh = (): ThrottleRow => ({ key: 'k', failures: 0, windowStartedAt: t0, lockouts: 0, lockedUntil: null, lastFailureAt: t0 });

describe('afterFailure', () => {
  test('the limit-th failure in the window starts a lockout of the base length; the count starts over', () => {
    let row = fresh();
    for (let failure = 1; failure < 5; failure++) {
      const next = afterFailure(row, at(failure * 1000), 5, limits);
      expect(next.lockoutMs).toBeUndefined();
      row = next.row;
    }
    const locked = afterFailure(row, at(5000), 5, limits);
    expect(locked.lockoutMs).toBe(60_000);
    expect(locked.row).toMatchObject({ failures: 0, lockouts: 1, lockedUntil: at(65_000) });
  });

  test('each further lockout lasts twice as long, up to the maximum', () => {
    let row: ThrottleRow = { ...fresh(), lockouts: 1, lockedUntil: at(0) };
    const lengths = [];
    for (let round = 0; round < 8; round++) {
      for (let failure = 0; failure < 5; failure++) {
        const now = at(round * 10_000_000 + failure);
        const next = afterFailure(row, now, 5, limits);
        row = next.row;
        if (next.lockoutMs) lengths.push(next.lockoutMs / 1000);
      }
      row = { ...row, lockedUntil: at(round * 10_000_000 + 1) };
    }
    expect(lengths).toEqual([120, 240, 480, 960, 1920, 3600, 3600, 3600]);
  });

  test('failures outside the window start a new count; a day without failures forgets the lockouts', () => {
    const old = { ...fresh(), failures: 4, lockouts: 3 };
    const later = afterFailure(old, at(limits.windowMs + 1), 5, limits);
    expect(later.lockoutMs).toBeUndefined();
    expect(later.row).toMatchObject({ failures: 1, lockouts: 3, windowStartedAt: at(limits.windowMs + 1) });
    const dayLater = afterFailure({ ...old, failures: 4 }, at(24 * 60 * 60_000 + 1), 1, limits);
    expect(dayLater.lockoutMs).toBe(60_000);
  });

  test('a failure during a lockout (decided before it began) does not extend it', () => {
    const locked = { ...fresh(), lockouts: 1, lockedUntil: at(60_000) };
    const next = afterFailure(locked, at(1000), 1, limits);
    expect(next.lockoutMs).toBeUndefined();
    expect(next.row.lockedUntil).toEqual(at(60_000));
  });
});

describe('throttleKeys', () => {
  test('one credential from one address is one pair; the credential and the address are counted apart', () => {
    const a = throttleKeys('clientId', 'client-1', '192.0.2.7');
    expect(throttleKeys('clientId', ' client-1 ', '192.0.2.7')).toEqual(a);
    const fromB = throttleKeys('clientId', 'client-1', '192.0.2.8');
    expect(fromB.credential).toBe(a.credential);
    expect(fromB.pair).not.toBe(a.pair);
    expect(fromB.address).not.toBe(a.address);
    const other = throttleKeys('clientId', 'client-2', '192.0.2.7');
    expect(other.address).toBe(a.address);
    expect(other.pair).not.toBe(a.pair);
    expect(other.credential).not.toBe(a.credential);
  });

  test('emails whatever their case; a client id and an email of the same text apart; IPv6 by /64; no name in clear', () => {
    expect(throttleKeys('email', 'Ann@Example.com', '::ffff:192.0.2.7')).toEqual(throttleKeys('email', 'ann@example.com', '192.0.2.7'));
    expect(throttleKeys('email', 'x', '192.0.2.7').pair).not.toBe(throttleKeys('clientId', 'x', '192.0.2.7').pair);
    expect(throttleKeys('email', 'ann@example.com', '2001:db8:aa:bb::1')).toEqual(throttleKeys('email', 'ann@example.com', '2001:db8:aa:bb:ffff::2'));
    expect(JSON.stringify(throttleKeys('email', 'ann@example.com', '192.0.2.7'))).not.toMatch(/ann|192\.0/);
  });
});

describe('pairLimit', () => {
  test('the limit, or one while the credential is guarded', () => {
    expect(pairLimit(undefined, t0, limits)).toBe(5);
    expect(pairLimit({ ...fresh(), lockedUntil: at(-1) }, t0, limits)).toBe(5);
    expect(pairLimit({ ...fresh(), lockedUntil: at(1) }, t0, limits)).toBe(1);
  });
});

describe('addressOf', () => {
  test('IPv4 as it is; IPv4-mapped IPv6 as IPv4; IPv6 by its /64 prefix', () => {
    expect(addressOf('192.0.2.7')).toBe('192.0.2.7');
    expect(addressOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressOf('2001:db8:aa:bb::1')).toBe('2001:db8:aa:bb::/64');
    expect(addressOf('2001:0db8:00aa:00bb:1:2:3:4')).toBe('2001:db8:aa:bb::/64');
    expect(addressOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressOf('::1')).toBe('0:0:0:0::/64');
  });
});
