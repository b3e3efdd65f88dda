import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM with associated data. Blob layout: version (1 byte) | iv (12) | tag (16) | ciphertext.
 * The associated data binds a ciphertext to the row it belongs to, so a value
 * copied into another row fails to decrypt.
 */
const FORMAT_VERSION = 1;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;
const HEADER_LENGTH = 1 + IV_LENGTH + TAG_LENGTH;

export interface SealedParts {
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

/** A raw 32-byte key, or (much cheaper per call) a secret KeyObject made once from it. */
export type AeadKey = Buffer | KeyObject;

export function seal(key: AeadKey, plaintext: Buffer, associatedData: string): Buffer {
  const iv = randomBytes(IV_LENGTH);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT_VERSION]), iv, cipher.getAuthTag(), ciphertext]);
}

export function splitSealed(blob: Buffer): SealedParts {
  if (blob.length < HEADER_LENGTH || blob[0] !== FORMAT_VERSION) throw new Error('unsupported ciphertext format');
  return {
    iv: blob.subarray(1, 1 + IV_LENGTH),
    tag: blob.subarray(1 + IV_LENGTH, HEADER_LENGTH),
    ciphertext: blob.subarray(HEADER_LENGTH),
  };
}

export function open(key: AeadKey, blob: Buffer, associatedData: string): Buffer {
  const { iv, tag, ciphertext } = splitSealed(blob);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}
