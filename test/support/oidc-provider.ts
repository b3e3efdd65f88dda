import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { decodeJwt, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './free-port.ts';

export interface ProviderAccount {
  email: string;
  emailVerified: boolean;
  groups: string[];
}

/** Rewrites the ID token the token endpoint answers (the hostile cases). */
export type IdTokenTamper = (claims: JWTPayload, sign: Signers) => Promise<string>;

export interface Signers {
  /** Signed with the provider's own key (its JWKS has it). */
  provider: (claims: JWTPayload) => Promise<string>;
  /** Signed with a key of the same kid that the provider's JWKS does not have. */
  other: (claims: JWTPayload) => Promise<string>;
  /** Unsigned (`alg: none`). */
  none: (claims: JWTPayload) => string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, ProviderAccount>;
  /** The account the next interaction signs in. */
  signInAs(accountId: string): void;
  /** The next token responses' ID tokens are rewritten by `tamper` (undefined: left alone). */
  tamperWith(tamper: IdTokenTamper | undefined): void;
  /**
   * A browser: follows redirects from `url` (the provider's authorization URL) with a cookie jar, through the
   * provider's interaction, until one leaves for `redirectUri`; answers that URL (code and state).
   */
  authorize(url: string, redirectUri: string): Promise<URL>;
  close(): Promise<void>;
}

const KID = 'provider-key';

/**
 * A real OpenID provider (panva's oidc-provider) on 127.0.0.1 for the tests: one confidential client,
 * accounts with e-mail and groups claims (in the ID token), and an interaction that signs in whichever
 * account the test names, with consent. PKCE is required, as a careful provider would.
 */
export async function startOidcProvider(redirectUris: string[]): Promise<TestOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const { privateKey: otherKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: KID, alg: 'RS256', use: 'sig' };
  const clientId = 'coffer-test-client';
  const clientSecret = 'provider-client-secret-0123456789abcdef';
  const accounts = new Map<string, ProviderAccount>();
  let nextAccount: string | undefined;
  let tamper: IdTokenTamper | undefined;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: account.email, email_verified: account.emailVerified, groups: account.groups }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    // the e-mail and groups claims go into the ID token, not only the userinfo endpoint
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['test-provider-cookie-key'] },
  });

  const signers: Signers = {
    provider: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: KID }).sign(privateKey),
    other: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: KID }).sign(otherKey),
    none: (claims) => `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`,
  };

  const handle = provider.callback();
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      void finishInteraction(req, res);
      return;
    }
    if (req.url?.startsWith('/token') && tamper) rewriteTokenResponse(res, tamper, signers);
    handle(req, res);
  });

  async function finishInteraction(req: IncomingMessage, res: ServerResponse) {
    try {
      const details = await provider.interactionDetails(req, res);
      if (!nextAccount) throw new Error('the test named no account to sign in');
      const grant = new provider.Grant({ accountId: nextAccount, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: nextAccount }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  }

  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    signInAs: (accountId) => void (nextAccount = accountId),
    tamperWith: (next) => void (tamper = next),
    authorize: (url, redirectUri) => followToRedirect(url, redirectUri),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Holds back the token endpoint's JSON answer and sends it with its ID token rewritten. */
function rewriteTokenResponse(res: ServerResponse, tamper: IdTokenTamper, signers: Signers) {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = ((chunk: unknown) => {
    chunks.push(Buffer.from(chunk as string));
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown) => {
    if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as string));
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    const send = (text: string) => {
      res.write = write;
      res.setHeader('content-length', Buffer.byteLength(text));
      end(text);
    };
    if (typeof body.id_token !== 'string') send(JSON.stringify(body));
    else void tamper(decodeJwt(body.id_token), signers).then((idToken) => send(JSON.stringify({ ...body, id_token: idToken })));
    return res;
  }) as typeof res.end;
}

async function followToRedirect(start: string, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    const location = response.headers.get('location');
    if (!location) throw new Error(`the provider stopped at ${url}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer().catch(() => undefined);
    const next = new URL(location, url);
    if (next.toString().startsWith(redirectUri)) return next;
    url = next.toString();
  }
  throw new Error('too many redirects');
}
