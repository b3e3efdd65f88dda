import { hash, verify } from '@node-rs/argon2';

// @node-rs/argon2 defaults to argon2id (m=19 MiB, t=2, p=1), the OWASP baseline.
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  return verify(passwordHash, password).catch(() => false);
}
