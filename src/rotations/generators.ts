import { generateKeyPairSync, randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { GeneratedParameters, PasswordRequirements } from './rotation-schema.ts';

const LOWERCASE = 'abcdefghijklmnopqrstuvwxyz';
const UPPERCASE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const DEFAULT_SYMBOLS = '-_.~!*';
export const DEFAULT_PASSWORD_REQUIREMENTS: PasswordRequirements = {
  length: 48,
  required: { lowercase: 1, uppercase: 1, digits: 1, symbols: 0 },
  allowedSymbols: DEFAULT_SYMBOLS,
};

function pick(alphabet: string, count: number): string[] {
  return Array.from({ length: count }, () => alphabet[randomInt(alphabet.length)]!);
}

/** Fisher–Yates with the CSPRNG, so the required characters are not always first. */
function shuffle(characters: string[]): string {
  for (let i = characters.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [characters[i], characters[j]] = [characters[j]!, characters[i]!];
  }
  return characters.join('');
}

/** A password meeting the requirements: the required characters of each class, the rest from all allowed ones. */
export function generatePassword(requirements: PasswordRequirements = DEFAULT_PASSWORD_REQUIREMENTS): string {
  const symbols = requirements.allowedSymbols ?? DEFAULT_SYMBOLS;
  const { lowercase, uppercase, digits, symbols: requiredSymbols } = requirements.required;
  const required = [...pick(LOWERCASE, lowercase), ...pick(UPPERCASE, uppercase), ...pick(DIGITS, digits), ...pick(symbols, requiredSymbols)];
  const rest = pick(LOWERCASE + UPPERCASE + DIGITS + symbols, requirements.length - required.length);
  return shuffle([...required, ...rest]);
}

/** A generated secret's value(s), by the name of the part (`value`, or `privateKey` and `publicKey`). */
export type GeneratedValue = Record<string, string>;

export function generateSecret(parameters: GeneratedParameters): GeneratedValue {
  switch (parameters.kind) {
    case 'password':
      return { value: pick(parameters.alphabet ?? LOWERCASE + UPPERCASE + DIGITS, parameters.length).join('') };
    case 'random-bytes':
      return { value: randomBytes(parameters.bytes).toString(parameters.encoding) };
    case 'uuid':
      return { value: randomUUID() };
    case 'ed25519':
      return pemPair(generateKeyPairSync('ed25519'));
    case 'rsa':
      return pemPair(generateKeyPairSync('rsa', { modulusLength: parameters.modulusLength }));
  }
}

function pemPair(pair: { privateKey: import('node:crypto').KeyObject; publicKey: import('node:crypto').KeyObject }): GeneratedValue {
  return {
    privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
