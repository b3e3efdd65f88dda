import { readFileSync } from 'node:fs';
import { Agent, type Dispatcher, request } from 'undici';
import { z } from 'zod';
import { AppError, ServiceUnavailableError } from '../errors.ts';
import { REVISION_HEADER } from '../http/revision-header.ts';

/** How an operator in another cluster reaches its Coffer server. */
export interface ServerConnectionOptions {
  /** The server's base URL, e.g. https://coffer.example.com. */
  url: string;
  /** PEM file of the CA(s) that sign the server's certificate (instead of the system's). */
  caFile?: string;
  /** The name the server's certificate must carry, when it differs from the URL's host. */
  tlsServerName?: string;
  /** PEM files of a client certificate and its key, for a server (or proxy) that asks for one. */
  clientCertFile?: string;
  clientKeyFile?: string;
  /** The longest one call may take (default 30 s). */
  timeoutMs?: number;
  /** Sent as User-Agent: `k8-operator/<version> (cluster <name>)` makes the server audit reads as k8-operator. */
  userAgent: string;
}

/** The server could not be reached, or answered that it cannot serve now (502, 503, 504): a 503 as a service would throw it. Retry later. */
export class ServerUnavailableError extends ServiceUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'ServerUnavailableError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A 2xx answer whose body is not the shape the wire module gives for it (src/wire/operator-wire.ts): a server
 * of another version, or something else at that URL. A plain Error, retried; its message names the fields, never a value.
 */
export class UnexpectedAnswerError extends Error {
  constructor(method: string, path: string, error: z.ZodError) {
    const fields = error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; ');
    super(`${method} ${path.split('?')[0]} answered a body of an unexpected shape (${fields})`);
    this.name = 'UnexpectedAnswerError';
  }
}

export interface CallOptions<Answer extends z.ZodType = z.ZodUnknown> {
  token?: string;
  /** The schema the 2xx answer is parsed with (its output is what call() resolves to); unknown when absent. */
  answer?: Answer;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Told the revision a 2xx answer's Coffer-Revision header names (the write committed a change), before call() resolves. */
  onRevision?: (revision: number) => void;
}

/**
 * The HTTP(S) connection to the Coffer server: one keep-alive pool with the TLS
 * settings, JSON calls whose refusals become the same AppError (statusCode,
 * error, message) a service throws in-process, and streaming GETs.
 */
export class ServerConnection {
  readonly url: URL;
  readonly #agent: Agent;
  readonly #options: ServerConnectionOptions;

  constructor(options: ServerConnectionOptions) {
    this.url = new URL(options.url);
    if (this.url.protocol !== 'https:' && this.url.protocol !== 'http:') throw new Error(`the server URL must be http(s): ${options.url}`);
    this.#options = options;
    const tls = {
      ...(options.caFile ? { ca: readFileSync(options.caFile) } : {}),
      ...(options.tlsServerName ? { servername: options.tlsServerName } : {}),
      ...(options.clientCertFile ? { cert: readFileSync(options.clientCertFile) } : {}),
      ...(options.clientKeyFile ? { key: readFileSync(options.clientKeyFile) } : {}),
    };
    this.#agent = new Agent({ connect: { ...tls, timeout: 10_000 }, keepAliveTimeout: 30_000 });
  }

  /**
   * A JSON call; answers the body of a 2xx parsed with `options.answer` (UnexpectedAnswerError when it does not
   * parse), throws AppError for a refusal and ServerUnavailableError otherwise.
   */
  async call<Answer extends z.ZodType = z.ZodUnknown>(method: Dispatcher.HttpMethod, path: string, options: CallOptions<Answer> = {}): Promise<z.output<Answer>> {
    const response = await this.#send(method, path, options, { accept: 'application/json' });
    const text = await response.body.text();
    const body = text ? parseJson(text) : undefined;
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.#failure(method, path, response.statusCode, body);
    const parsed = (options.answer ?? z.unknown()).safeParse(body);
    if (!parsed.success) throw new UnexpectedAnswerError(method, path, parsed.error);
    const revision = Number(response.headers[REVISION_HEADER.toLowerCase()]);
    if (options.onRevision && Number.isSafeInteger(revision) && revision > 0) options.onRevision(revision);
    return parsed.data as z.output<Answer>;
  }

  /** A GET whose body is read as it arrives (an event stream); a refusal throws as call() does. */
  async stream(path: string, options: Omit<CallOptions, 'answer'>): Promise<AsyncIterable<Buffer> & { destroy(): void }> {
    const response = await this.#send('GET', path, options, { accept: 'text/event-stream' }, { bodyTimeout: 0 });
    if (response.statusCode === 200) return response.body;
    const text = await response.body.text();
    throw this.#failure('GET', path, response.statusCode, text ? parseJson(text) : undefined);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #send(method: Dispatcher.HttpMethod, path: string, options: CallOptions<z.ZodType>, extraHeaders: Record<string, string>, limits: { bodyTimeout?: number } = {}) {
    const headers: Record<string, string> = { 'user-agent': this.#options.userAgent, ...extraHeaders, ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await request(new URL(path, this.url), {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        dispatcher: this.#agent,
        signal: options.signal,
        headersTimeout: this.#options.timeoutMs ?? 30_000,
        bodyTimeout: limits.bodyTimeout ?? this.#options.timeoutMs ?? 30_000,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new ServerUnavailableError(`cannot reach the Coffer server at ${this.url.origin}: ${describe(error)}`, { cause: error });
    }
  }

  #failure(method: string, path: string, status: number, body: unknown): Error {
    const answer = (body ?? {}) as { error?: unknown; code?: unknown; message?: unknown };
    const message = typeof answer.message === 'string' ? answer.message : `${method} ${path.split('?')[0]} answered ${status}`;
    if (status === 502 || status === 503 || status === 504)
      return new ServerUnavailableError(`the Coffer server at ${this.url.origin} cannot serve now (${status}): ${message}`);
    if (status >= 400 && status < 500) return new AppError(status, specificCode(answer), message);
    return new ServerUnavailableError(`the Coffer server at ${this.url.origin} failed (${status}): ${message}`);
  }
}

/** The answer's specific code (`code`; `error` from a server older than the field). */
function specificCode(answer: { error?: unknown; code?: unknown }): string {
  if (typeof answer.code === 'string') return answer.code;
  return typeof answer.error === 'string' ? answer.error : 'Error';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A network error as a short phrase (its code and message; never a header). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: string } | undefined)?.code ?? (error as { code?: string }).code;
  return [code, cause?.message ?? error.message].filter(Boolean).join(': ');
}
