import { X509Certificate } from 'node:crypto';
import { text } from '../validation/input.ts';

const BEGIN = '-----BEGIN CERTIFICATE-----';
const END = '-----END CERTIFICATE-----';
const PEM_MAX = 65_536;

/** The PEM certificate blocks of a bundle, found in one pass; undefined when text outside them is not whitespace. */
function certificateBlocks(bundle: string): string[] | undefined {
  const blocks: string[] = [];
  let at = 0;
  while (at < bundle.length) {
    const begin = bundle.indexOf(BEGIN, at);
    if (begin < 0) return bundle.slice(at).trim() === '' ? blocks : undefined;
    if (bundle.slice(at, begin).trim() !== '') return undefined;
    const end = bundle.indexOf(END, begin + BEGIN.length);
    if (end < 0) return undefined;
    blocks.push(bundle.slice(begin, end + END.length));
    at = end + END.length;
  }
  return blocks;
}

function parses(block: string): boolean {
  try {
    new X509Certificate(block);
    return true;
  } catch {
    return false;
  }
}

/** Empty, or PEM certificates that parse (a CA bundle); kept as sent, trimmed. */
export const pemCertificates = text(PEM_MAX).superRefine((value, context) => {
  if (value === '') return;
  const blocks = certificateBlocks(value);
  if (!blocks || blocks.length === 0 || !blocks.every(parses)) context.addIssue({ code: 'custom', message: 'must be PEM certificates (-----BEGIN CERTIFICATE-----)' });
});
