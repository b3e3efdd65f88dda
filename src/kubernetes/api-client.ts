import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Configuration, KubeConfig, PromiseHttpLibrary, RequestContext } from '@kubernetes/client-node';
import { type Dispatcher, getGlobalDispatcher } from 'undici';
import {
  createConfiguration,
  IsomorphicFetchHttpLibrary,
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  setHeaderMiddleware,
  wrapHttpLibrary,
} from './client-node.ts';
import { VERSION } from '../version.ts';

const gunzipped = promisify(gunzip);

/**
 * Sends the generated clients' requests with the dispatcher's own `request` (the one connection pool, the
 * authentication KubeConfig puts on each request), not through `fetch`: WHATWG fetch builds a Request, a Headers
 * list, a response stream and a Response for every call, and at a 10,000-Integration cold start the operator spent
 * 13% of its busy time in undici's fetch layer for two requests per Integration (bench/RESULTS.md). The answer is
 * read whole before it is handed on (the clients read every body they use; one left unread would hold its stream
 * open), and a gzip-encoded one is decompressed, as fetch would. A body other than text (never one Coffer sends)
 * goes through fetch as before. Watches do not come here: client-node's Watch calls fetch itself.
 */
class DispatcherHttpLibrary implements PromiseHttpLibrary {
  readonly #fetch = new IsomorphicFetchHttpLibrary();

  async send(request: RequestContext): Promise<ResponseContext> {
    const body = request.getBody();
    if (body !== undefined && typeof body !== 'string') return this.#fetch.send(request).toPromise();
    const url = new URL(request.getUrl());
    const dispatcher = request.getDispatcher() ?? getGlobalDispatcher();
    const response = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.getHttpMethod(),
      headers: requestHeaders(request.getHeaders()),
      body,
      signal: request.getSignal(),
    });
    const data = await responseBody(response);
    return new ResponseContext(response.statusCode, responseHeaders(response.headers), new SelfDecodingBody(Promise.resolve(data)));
  }
}

/** Header names in lower case (HTTP/2 has no other), and gzip asked for, as fetch does. */
function requestHeaders(headers: Record<string, string>): Record<string, string> {
  const lowered: Record<string, string> = { 'accept-encoding': 'gzip' };
  for (const [name, value] of Object.entries(headers)) lowered[name.toLowerCase()] = value;
  return lowered;
}

async function responseBody(response: Dispatcher.ResponseData): Promise<Buffer> {
  const raw = Buffer.from(await response.body.arrayBuffer());
  return response.headers['content-encoding'] === 'gzip' ? gunzipped(raw) : raw;
}

function responseHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

const httpLibrary = wrapHttpLibrary(new DispatcherHttpLibrary());

/**
 * An API client of `type` for the current context of `config`, as KubeConfig.makeApiClient makes one, sending
 * through DispatcherHttpLibrary: the operator's clients, whose calls are its hot path.
 */
export function makeApiClient<Api>(config: KubeConfig, type: new (configuration: Configuration) => Api): Api {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  return new type(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: config },
      httpApi: httpLibrary,
      middleware: [setHeaderMiddleware('User-Agent', `coffer/${VERSION}`)],
    }),
  );
}
