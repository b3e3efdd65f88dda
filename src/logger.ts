import type { LoggerOptions } from 'pino';

/**
 * Paths pino censors wherever they appear in a log object. Request bodies and
 * responses are never logged; these guard the places a header or a value
 * could still slip in.
 */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.password',
  '*.token',
  '*.accessToken',
  '*.clientSecret',
  '*.inviteToken',
  '*.secretValue',
  '*.encryptionKey',
  '*.authSecret',
  '*.databaseUrl',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    serializers: {
      req(request: { id: string; method: string; url: string; ip?: string }) {
        return { id: request.id, method: request.method, url: stripQuerySecrets(request.url), ip: request.ip };
      },
    },
  };
}

/** Query strings may carry tokens (e.g. `?token=`); keep only parameter names. */
function stripQuerySecrets(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const names = new URLSearchParams(url.slice(mark + 1));
  const kept = [...names.keys()].map((name) => (/(token|secret|password|key)/i.test(name) ? `${name}=[redacted]` : `${name}=${names.get(name)}`));
  return `${url.slice(0, mark)}?${kept.join('&')}`;
}
