import { X509Certificate } from 'node:crypto';
import { text } from '../validation/input.ts';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const PEM_MAX = 65_536;

/** Empty, or PEM certificates that parse (a CA bundle); kept as sent, trimmed. */
export const pemCertificates = text(PEM_MAX).superRefine((value, context) => {
  if (value === '') return;
  const blocks = value.match(PEM_CERTIFICATE) ?? [];
  const parses = (block: string) => {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      return false;
    }
  };
  if (blocks.length === 0 || !blocks.every(parses)) context.addIssue({ code: 'custom', message: 'must be PEM certificates (-----BEGIN CERTIFICATE-----)' });
});
