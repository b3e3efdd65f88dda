import { describe, expect, test } from 'vitest';
import { generatePassword } from '../../src/rotations/generators.ts';
import { nextRotationAt } from '../../src/rotations/rotation-schedule.ts';

describe('nextRotationAt', () => {
  test('is `interval` days after the day of the last run, at the time of day', () => {
    expect(nextRotationAt(new Date('2026-01-10T12:00:00Z'), 1, { hours: 3, minutes: 30 }).toISOString()).toBe('2026-01-11T03:30:00.000Z');
    expect(nextRotationAt(new Date('2026-01-31T23:59:59Z'), 30, { hours: 0, minutes: 0 }).toISOString()).toBe('2026-03-02T00:00:00.000Z');
  });

  test('a run late in its day does not drift the schedule; an early one does not run twice that day', () => {
    const at = { hours: 3, minutes: 30 };
    expect(nextRotationAt(new Date('2026-01-11T03:31:00Z'), 1, at).toISOString()).toBe('2026-01-12T03:30:00.000Z');
    expect(nextRotationAt(new Date('2026-01-11T00:05:00Z'), 1, at).toISOString()).toBe('2026-01-12T03:30:00.000Z');
  });
});

describe('generatePassword', () => {
  test('meets its requirements: length, each class at least as often as required, only allowed symbols', () => {
    const requirements = { length: 24, required: { lowercase: 3, uppercase: 4, digits: 5, symbols: 6 }, allowedSymbols: '#%' };
    for (let i = 0; i < 50; i++) {
      const password = generatePassword(requirements);
      expect(password).toHaveLength(24);
      expect(password).toMatch(/^[A-Za-z0-9#%]+$/);
      expect(password.match(/[a-z]/g)!.length).toBeGreaterThanOrEqual(3);
      expect(password.match(/[A-Z]/g)!.length).toBeGreaterThanOrEqual(4);
      expect(password.match(/[0-9]/g)!.length).toBeGreaterThanOrEqual(5);
      expect(password.match(/[#%]/g)!.length).toBeGreaterThanOrEqual(6);
    }
  });

  test('by default: 48 characters that need no quoting in SQL or a connection string', () => {
    const password = generatePassword();
    expect(password).toHaveLength(48);
    expect(password).toMatch(/^[A-Za-z0-9\-_.~!*]+$/);
  });
});
