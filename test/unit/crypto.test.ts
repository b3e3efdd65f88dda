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

describe('passwords and tokens', () => {
  test('argon2id hashes verify only the right password', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(hash, 'correct horse')).toBe(true);
    expect(await verifyPassword(hash, 'wrong horse')).toBe(false);
    expect(await verifyPassword('not a hash', 'x')).toBe(false);
  });

  test('tokens verify with their secret only, and expire', async () => {
    const signer = new TokenSigner('a'.repeat(48));
    const token = await signer.sign({ authTokenType: 'identityAccessToken', identityAccessTokenId: 't1' }, 0);
    expect(await signer.verify(token)).toMatchObject({ ok: true, claims: { identityAccessTokenId: 't1' } });
    expect(await new TokenSigner('b'.repeat(48)).verify(token)).toEqual({ ok: false, reason: 'invalid' });
    expect(await signer.verify('garbage')).toEqual({ ok: false, reason: 'malformed' });
    const short = await signer.sign({ authTokenType: 'identityAccessToken' }, 1);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(await signer.verify(short)).toEqual({ ok: false, reason: 'expired' });
  });
});
