import { randomBytes } from 'node:crypto';

/** What a lease's statements are filled with: all generated here, never taken from a request. */
export interface LeaseCredentials {
  username: string;
  password: string;
}

/** A role name of lowercase letters and digits, so it needs no quoting and cannot close one. */
export function generateUsername(): string {
  return `coffer_${randomBytes(12).toString('hex')}`;
}

/** 64 hexadecimal characters (256 bits): no quote, backslash or dollar sign can appear in it. */
export function generatePassword(): string {
  return randomBytes(32).toString('hex');
}

/** `2026-11-26 05:30:00+00`: digits, dashes, colons, a space and a plus; safe inside a quoted literal. */
export function formatExpiration(expireAt: Date): string {
  return `${expireAt.toISOString().slice(0, 19).replace('T', ' ')}+00`;
}

/**
 * Fills `{{username}}`, `{{password}}` and `{{expiration}}` in the project admin's template. The values come from
 * the generators above, whose alphabets hold no character that could end a quoted identifier or literal; an unknown
 * placeholder stays as written (the database then refuses it).
 */
export function fillTemplate(template: string, values: { username: string; password?: string; expiration: string }): string {
  return template.replace(/\{\{\s*(username|password|expiration)\s*\}\}/g, (_match, name: 'username' | 'password' | 'expiration') => values[name] ?? '');
}
