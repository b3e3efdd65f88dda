import { describe, expect, test } from 'vitest';
import { assertBoundClaims, claimAt } from '../../src/jwt-auth/jwt-verifier.ts';
import { assertReviewAllows, listOf } from '../../src/kubernetes-auth/token-review.ts';
import { RefusedToken } from '../../src/workload-auth/workload-login.ts';

const review = (username: string, extra: Record<string, unknown> = {}) => ({ status: { authenticated: true, user: { username }, ...extra } });
const open = { allowedNamespaces: '', allowedNames: '', allowedAudience: '' };

describe('assertReviewAllows (a TokenReview answer against Kubernetes Auth)', () => {
  test('answers the service account it allows', () => {
    expect(assertReviewAllows({ ...open, allowedNamespaces: 'shop, tools', allowedNames: 'web' }, review('system:serviceaccount:tools:web'))).toBe('tools/web');
    expect(assertReviewAllows({ ...open, allowedAudience: 'coffer' }, review('system:serviceaccount:a:b', { audiences: ['x', 'coffer'] }))).toBe('a/b');
  });

  test.each([
    ['not authenticated', open, { status: { authenticated: false, user: { username: 'system:serviceaccount:a:b' } } }],
    ['no status', open, {}],
    ['not an object', open, 'nope'],
    ['a user, not a service account', open, review('admin')],
    ['a username with extra parts', open, review('system:serviceaccount:a:b:c')],
    ['another namespace', { ...open, allowedNamespaces: 'shop' }, review('system:serviceaccount:shopping:web')],
    ['another name', { ...open, allowedNames: 'web' }, review('system:serviceaccount:shop:web2')],
    ['no audiences confirmed', { ...open, allowedAudience: 'coffer' }, review('system:serviceaccount:a:b')],
    ['another audience', { ...open, allowedAudience: 'coffer' }, review('system:serviceaccount:a:b', { audiences: ['coffer2'] })],
  ])('refuses %s', (_name, config, answer) => {
    expect(() => assertReviewAllows(config, answer)).toThrow(RefusedToken);
  });

  test('lists are comma-separated, trimmed, empty pieces dropped', () => {
    expect(listOf(' a, b,,c ,')).toEqual(['a', 'b', 'c']);
    expect(listOf('')).toEqual([]);
  });
});

describe('JWT bound claims', () => {
  test('claimAt reaches keys that contain dots and nested objects', () => {
    const payload = { 'kubernetes.io': { namespace: 'shop', serviceaccount: { name: 'web' } }, a: { b: { c: 1 } }, 'x.y': 2 };
    expect(claimAt(payload, 'kubernetes.io.namespace'.split('.'))).toBe('shop');
    expect(claimAt(payload, 'kubernetes.io.serviceaccount.name'.split('.'))).toBe('web');
    expect(claimAt(payload, ['a', 'b', 'c'])).toBe(1);
    expect(claimAt(payload, ['x', 'y'])).toBe(2);
    expect(claimAt(payload, ['a', 'missing'])).toBeUndefined();
    expect(claimAt(payload, ['__proto__'])).toBeUndefined();
  });

  const bounds = { boundIssuer: 'https://i', boundSubject: 's', boundAudiences: 'a1, a2', boundClaims: { groups: 'admins,ops', 'k.ns': 'shop' } };
  const good = { iss: 'https://i', sub: 's', aud: 'a2', groups: ['dev', 'ops'], k: { ns: 'shop' } };

  test('a token that matches every bound passes; an array claim matches when one element is allowed', () => {
    expect(() => assertBoundClaims(bounds, good)).not.toThrow();
    expect(() => assertBoundClaims({ boundIssuer: '', boundSubject: '', boundAudiences: '', boundClaims: {} }, {})).not.toThrow();
  });

  test.each([
    ['issuer', { iss: 'https://j' }],
    ['subject', { sub: 'S' }],
    ['audience', { aud: ['a3'] }],
    ['claim value', { groups: ['dev'] }],
    ['claim of an object type', { groups: { admins: true } }],
    ['nested claim', { k: { ns: 'other' } }],
  ])('refuses a wrong %s', (_name, change) => {
    expect(() => assertBoundClaims(bounds, { ...good, ...change })).toThrow(RefusedToken);
  });
});
