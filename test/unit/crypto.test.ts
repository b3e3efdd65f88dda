import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { open, seal } from '../../src/crypto/aead.ts';
import { Keyring } from '../../src/crypto/keyring.ts';
import { hashPassword, verifyPassword } from '../../src/crypto/passwords.ts';
import { TokenSigner } from '../../src/crypto/tokens.ts';

describe('envelope encryption', () => {
  test('a value decrypts only with its key and its associated data', () => {
    const key = randomBytes(32);
    const blob = seal(key, Buffer.from('hunter2'), 'secret:1');
    expect(open(key, blob, 'secret:1').toString()).toBe('hunter2');
    expect(blob.includes(Buffer.from('hunter2'))).toBe(false);
    expect(() => open(key, blob, 'secret:2')).toThrow();
    expect(() => open(randomBytes(32), blob, 'secret:1')).toThrow();
    const tampered = Buffer.from(blob);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => open(key, tampered, 'secret:1')).toThrow();
  });

  test('project data keys are wrapped by the root key and bound to their project', () => {
    const root = randomBytes(32);
    const writer = new Keyring(root);
    const wrapped = writer.createProjectKey('project-a');
    const sealed = writer.encrypt('project-a', wrapped, 'value', 'ctx');
    const reader = new Keyring(root);
    expect(reader.decrypt('project-a', wrapped, sealed, 'ctx')).toBe('value');
    expect(() => new Keyring(root).projectKey('project-b', wrapped)).toThrow();
    expect(() => new Keyring(randomBytes(32)).projectKey('project-a', wrapped)).toThrow();
  });
});

describe('root key check value', () => {
  test('the same key and installation give the same value; another key or installation another; the value is not the key', () => {
    const key = randomBytes(32);
    const installation = '3f0c3a4e-0000-4000-8000-000000000001';
    const check = new Keyring(key).rootKeyCheck(installation);
    expect(check).toHaveLength(32);
    expect(check.equals(key)).toBe(false);
    expect(new Keyring(Buffer.from(key)).matchesRootKeyCheck(installation, check)).toBe(true);
    expect(new Keyring(randomBytes(32)).matchesRootKeyCheck(installation, check)).toBe(false);
    expect(new Keyring(key).matchesRootKeyCheck('3f0c3a4e-0000-4000-8000-000000000002', check)).toBe(false);
    expect(new Keyring(key).matchesRootKeyCheck(installation, check.subarray(0, 16))).toBe(false);
  });

  test('a data key re-wrapped under another root key opens there and only there', () => {
    const old = new Keyring(randomBytes(32));
    const wrapped = old.createProjectKey('p1');
    const dataKey = old.projectKey('p1', wrapped);
    const next = new Keyring(randomBytes(32));
    const rewrapped = next.wrapProjectKey('p1', dataKey);
    expect(new Keyring(Buffer.alloc(32, 1)).projectKey.bind(new Keyring(Buffer.alloc(32, 1)), 'p1', rewrapped)).toThrow();
    expect(next.projectKey('p1', rewrapped).equals(dataKey)).toBe(true);
  });
});

describe('passwords and tokens', () => {
  test('argon2id hashes verify only the right password', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(hash, 'correct horse')).toBe(true);
    expect(await verifyPassword(hash, 'wrong horse')).toBe(false);
    expect(await verifyPassword('not a hash', 'x')).toBe(false);
  });

  test('tokens verify with their secret only, and expire', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const signer = new TokenSigner('a'.repeat(48), () => now);
    const token = await signer.sign({ authTokenType: 'identityAccessToken', identityAccessTokenId: 't1' }, 0);
    expect(await signer.verify(token)).toMatchObject({ ok: true, claims: { identityAccessTokenId: 't1' } });
    expect(await new TokenSigner('b'.repeat(48)).verify(token)).toEqual({ ok: false, reason: 'invalid' });
    expect(await signer.verify('garbage')).toEqual({ ok: false, reason: 'malformed' });
    const short = await signer.sign({ authTokenType: 'identityAccessToken' }, 1);
    now += 999;
    expect(await signer.verify(short)).toMatchObject({ ok: true });
    now += 1;
    expect(await signer.verify(short)).toEqual({ ok: false, reason: 'expired' });
    // a token without expiry does not expire
    now += 365 * 24 * 3600 * 1000;
    expect(await signer.verify(token)).toMatchObject({ ok: true });
  });
});
