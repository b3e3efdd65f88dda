import { expect, test } from 'vitest';
import { abilityAllows, buildAbility, type PermissionRule } from '../../src/permissions/permission-rules.ts';

const HOSTILE = `${'/**/@(*|*)'.repeat(12)}!`;
const read: PermissionRule = { subject: 'secrets', action: ['read'] };
const at = (secretPath: string) => ({ environment: 'dev', secretPath });

test('$glob conditions match as path globs, compiled once per rule', () => {
  const ability = buildAbility([{ ...read, conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } }]);
  expect(abilityAllows(ability, 'read', 'secrets', at('/app'))).toBe(true);
  expect(abilityAllows(ability, 'read', 'secrets', at('/app/db'))).toBe(true);
  expect(abilityAllows(ability, 'read', 'secrets', at('/ops'))).toBe(false);
  expect(abilityAllows(ability, 'read', 'secrets', { environment: 'prod', secretPath: '/app' })).toBe(false);
});

test('a stored glob that no longer compiles fails closed, and the report names the rule, never the pattern', () => {
  const reports: unknown[] = [];
  const granting = buildAbility(
    [
      { ...read, conditions: { environment: 'dev', secretPath: { $glob: HOSTILE } } },
      { ...read, conditions: { environment: 'dev', secretPath: { $glob: '/ok' } } },
    ],
    (report) => reports.push(report),
  );
  expect(abilityAllows(granting, 'read', 'secrets', at(`${'/x'.repeat(13)}!`))).toBe(false);
  expect(abilityAllows(granting, 'read', 'secrets', at('/ok'))).toBe(true);

  const forbidding = buildAbility([read, { ...read, inverted: true, conditions: { environment: 'dev', secretPath: { $glob: HOSTILE } } }], (report) =>
    reports.push(report),
  );
  expect(abilityAllows(forbidding, 'read', 'secrets', at('/anything'))).toBe(false);
  expect(abilityAllows(forbidding, 'read', 'secrets', { environment: 'prod', secretPath: '/' })).toBe(true);

  expect(reports).toEqual([
    { subject: 'secrets', inverted: false, field: 'secretPath', reason: 'the pattern has more than 32 wildcards (*, **, ?, […])' },
    { subject: 'secrets', inverted: true, field: 'secretPath', reason: 'the pattern has more than 32 wildcards (*, **, ?, […])' },
  ]);
  expect(JSON.stringify(reports)).not.toContain('@(');
});

test('a stored $regex condition is never compiled by JavaScript: the rule fails closed like an unusable glob', () => {
  const reports: unknown[] = [];
  const ability = buildAbility([{ ...read, conditions: { secretPath: { $regex: '^/app' } } }], (report) => reports.push(report));
  expect(abilityAllows(ability, 'read', 'secrets', at('/app'))).toBe(false);
  expect(reports).toEqual([{ subject: 'secrets', inverted: false, field: 'secretPath', reason: '$regex conditions are not supported' }]);
});
