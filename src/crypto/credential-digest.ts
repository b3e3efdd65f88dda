import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * High-entropy credentials (client secrets, invite tokens): 32 random bytes,
 * stored as a SHA-256 digest that is looked up directly. A slow hash adds
 * nothing for 256-bit random values.
 */
export class CredentialDigest {
  generate(): string {
    return randomBytes(32).toString('hex');
  }

  digest(credential: string): Buffer {
    return createHash('sha256').update(credential, 'utf8').digest();
  }

  /** Constant-time equality of two values (digested first, so lengths never differ). */
  matches(expected: string, actual: string): boolean {
    return timingSafeEqual(this.digest(expected), this.digest(actual));
  }
}
