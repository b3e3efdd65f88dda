import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export interface LocalServer {
  /** https://127.0.0.1:<port> (or http:// for a plain server) */
  url: string;
  /** The self-signed certificate it serves (its own CA). */
  caCert: string;
  /** Requests it received: method, path, authorization header and body. */
  requests: { method: string; path: string; authorization: string | undefined; body: string }[];
  close(): Promise<void>;
}

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** A throwaway self-signed certificate for 127.0.0.1 (openssl, as the control plane's). */
export async function selfSignedCertificate(): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-tls-'));
  try {
    await execFileP(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
        '-subj',
        '/CN=localhost',
        '-days',
        '1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { cwd: dir },
    );
    return { key: await readFile(path.join(dir, 'key.pem'), 'utf8'), cert: await readFile(path.join(dir, 'cert.pem'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An HTTPS (or, with `plain`, HTTP) server on 127.0.0.1 whose answers `handle` decides, recording what it received. */
export async function startLocalServer(handle: Handler, options: { plain?: boolean } = {}): Promise<LocalServer> {
  const tls = options.plain ? undefined : await selfSignedCertificate();
  const requests: LocalServer['requests'] = [];
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: request.method ?? '', path: request.url ?? '', authorization: request.headers.authorization, body });
      handle(request, response, body);
    });
  };
  const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, listener) : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    caCert: tls?.cert ?? '',
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
