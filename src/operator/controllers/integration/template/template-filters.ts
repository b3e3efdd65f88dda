import { TokenKind } from 'liquidjs';
import { parse as parseYaml, stringify as toYaml } from 'yaml';

/**
 * A filter refused its input. Its message is shown in the Integration's
 * status, so it never quotes the input (a secret value): only what was wrong.
 */
export class FilterError extends Error {}

/** What Liquid passes a filter as `this`: the filter as written (its arguments' tokens). */
interface FilterCall {
  token: { args: readonly unknown[] };
}

/** Longest indentation the indent filters make (each line is copied that many times over). */
const MAX_INDENT = 64;
/** Longest string a filter takes: a target holds at most 1 MiB, and a loop must not grow a value without bound. */
const MAX_INPUT_LENGTH = 4 * 1024 * 1024;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[\s\S]*?\r?\n-----END \1-----/g;

/** The filters Coffer adds to Liquid's own, by name (aliases as in sprig, which ESO's and Infisical's templates use). */
export const TEMPLATE_FILTERS: Record<string, (this: FilterCall, value: unknown, ...args: unknown[]) => unknown> = {
  b64enc: (value) => Buffer.from(text(value, 'b64enc'), 'utf8').toString('base64'),
  b64dec: (value) => decodeBase64(text(value, 'b64dec')),
  to_json: (value, indent) => JSON.stringify(value ?? null, null, indentOf(indent)),
  from_json: (value) => parseJson(text(value, 'from_json')),
  to_yaml: (value) => toYaml(value ?? null),
  from_yaml: (value) => parseYamlValue(text(value, 'from_yaml')),
  percent_encode: (value) => encodeURIComponent(text(value, 'percent_encode')),
  basic_auth: (user, password) => Buffer.from(`${text(user, 'basic_auth')}:${text(password, 'basic_auth')}`, 'utf8').toString('base64'),
  dockerconfigjson: dockerConfigJson,
  pem: (value, type) => pemBlocks(text(value, 'pem'), (blockType) => blockType === text(type, 'pem')).join('\n'),
  pem_private_key: (value) =>
    pemBlocks(text(value, 'pem_private_key'), (blockType) => blockType.endsWith('PRIVATE KEY'))[0] ?? missingBlock('pem_private_key', 'PRIVATE KEY'),
  pem_leaf: (value) => pemBlocks(text(value, 'pem_leaf'), isCertificate)[0] ?? missingBlock('pem_leaf', 'CERTIFICATE'),
  pem_chain: (value) => pemBlocks(text(value, 'pem_chain'), isCertificate).slice(1).join('\n'),
  indent: (value, width) => indentLines(text(value, 'indent'), width),
  nindent: (value, width) => `\n${indentLines(text(value, 'nindent'), width)}`,
  // the message is shown only when the template spells it out: a message from a variable could be a value
  required(value, message) {
    if (value !== undefined && value !== null && value !== '') return value;
    const literal = typeof message === 'string' && this.token.args[0] !== undefined && (this.token.args[0] as { kind?: unknown }).kind === TokenKind.Quoted;
    throw new FilterError(literal ? message : 'a required value is missing');
  },
};

function text(value: unknown, filter: string): string {
  if (typeof value === 'string') {
    if (value.length > MAX_INPUT_LENGTH) throw new FilterError(`${filter} takes at most ${MAX_INPUT_LENGTH} characters`);
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new FilterError(`${filter} takes a string (got ${value === undefined || value === null ? 'nothing' : typeof value})`);
}

function decodeBase64(value: string): string {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) throw new FilterError('b64dec: the value is not base64');
  return Buffer.from(compact, 'base64').toString('utf8');
}

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new FilterError('from_json: the value is not JSON');
  }
}

function parseYamlValue(value: string): unknown {
  try {
    // few aliases: a "billion laughs" document is refused, not expanded
    return parseYaml(value, { maxAliasCount: 100 });
  } catch {
    throw new FilterError('from_yaml: the value is not YAML (or expands too many aliases)');
  }
}

function indentOf(indent: unknown): number | undefined {
  if (indent === undefined) return undefined;
  if (typeof indent !== 'number' || !Number.isInteger(indent) || indent < 0 || indent > 10)
    throw new FilterError('to_json: the indentation is a whole number from 0 to 10');
  return indent;
}

/** `{{ "registry.example.com" | dockerconfigjson: USER, PASSWORD }}`: a .dockerconfigjson with one registry. */
function dockerConfigJson(server: unknown, username: unknown, password: unknown, email: unknown): string {
  const user = text(username, 'dockerconfigjson');
  const pass = text(password, 'dockerconfigjson');
  const auth = Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');
  const entry = { username: user, password: pass, auth, ...(email === undefined ? {} : { email: text(email, 'dockerconfigjson') }) };
  return JSON.stringify({ auths: { [text(server, 'dockerconfigjson')]: entry } });
}

/** The PEM blocks whose type passes `wanted`, each with a final newline. */
function pemBlocks(value: string, wanted: (type: string) => boolean): string[] {
  return [...value.matchAll(PEM_BLOCK)].filter((match) => wanted(match[1]!)).map((match) => `${match[0].replace(/\r\n/g, '\n')}\n`);
}

const isCertificate = (type: string) => type === 'CERTIFICATE';

function missingBlock(filter: string, type: string): never {
  throw new FilterError(`${filter}: the value holds no ${type} block`);
}

function indentLines(value: string, width: unknown): string {
  if (typeof width !== 'number' || !Number.isInteger(width) || width < 0 || width > MAX_INDENT)
    throw new FilterError(`indent: the width is a whole number from 0 to ${MAX_INDENT}`);
  const pad = ' '.repeat(width);
  return value
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}
