import { describe, expect, test } from 'vitest';
import { groupsOf, mappedOrgRole } from '../../src/sso/sso-access.ts';

describe('groupsOf', () => {
  test('an array keeps its strings, one string is one group, anything else is none', () => {
    expect(groupsOf(['a', 1, 'b', null])).toEqual(['a', 'b']);
    expect(groupsOf('admins')).toEqual(['admins']);
    expect(groupsOf({ admins: true })).toEqual([]);
    expect(groupsOf(undefined)).toEqual([]);
  });
});

describe('mappedOrgRole', () => {
  const mappings = [
    { group: 'staff', orgRole: 'member' as const },
    { group: 'admins', orgRole: 'admin' as const },
    { group: 'team', projectId: 'p', projectRole: 'viewer' },
  ];

  test('the highest role among the groups wins', () => {
    expect(mappedOrgRole(mappings, ['staff', 'admins'], 'no-access')).toBe('admin');
    expect(mappedOrgRole(mappings, ['staff'], 'no-access')).toBe('member');
  });

  test('no mapped group: the fallback; no org mapping at all: undefined (managed by hand)', () => {
    expect(mappedOrgRole(mappings, ['team'], 'no-access')).toBe('no-access');
    expect(mappedOrgRole([{ group: 'team', projectId: 'p', projectRole: 'viewer' }], ['team'], 'member')).toBeUndefined();
  });
});
