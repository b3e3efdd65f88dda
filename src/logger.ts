import pino, { type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

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

/** `auto`: readable lines when the output is a terminal, JSON (one object a line) otherwise. */
export type LogFormatSetting = 'auto' | 'json' | 'pretty';

/** Fields that the messages carrying them already show (a request's line, a migration's): left out of pretty lines. */
const SHOWN_IN_MESSAGE = ['method', 'url', 'route', 'statusCode', 'durationMs', 'migration', 'ms', 'count'];

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

export function usesPrettyLogs(format: LogFormatSetting, fd: 1 | 2): boolean {
  if (format === 'auto') return (fd === 1 ? process.stdout : process.stderr).isTTY === true;
  return format === 'pretty';
}

/**
 * The process logger, writing synchronously to stdout (`serve`) or stderr
 * (one-shot commands, whose stdout stays parseable). Pretty lines are made in
 * this thread (no transport worker) so nothing is lost when the process exits.
 */
export function createLogger(settings: { level: string; format: LogFormatSetting }, fd: 1 | 2 = 1): Logger {
  if (!usesPrettyLogs(settings.format, fd)) return pino(loggerOptions(settings.level), pino.destination({ fd, sync: true }));
  const stream = pretty({
    destination: fd,
    sync: true,
    colorize: (fd === 1 ? process.stdout : process.stderr).isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: ['pid', 'hostname', ...SHOWN_IN_MESSAGE].join(','),
    singleLine: true,
  });
  return pino(loggerOptions(settings.level), stream);
}

/** Query strings may carry tokens (e.g. `?token=`); keep only parameter names. */
export function stripQuerySecrets(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const names = new URLSearchParams(url.slice(mark + 1));
  const kept = [...names.keys()].map((name) => (/(token|secret|password|key)/i.test(name) ? `${name}=[redacted]` : `${name}=${names.get(name)}`));
  return `${url.slice(0, mark)}?${kept.join('&')}`;
}
