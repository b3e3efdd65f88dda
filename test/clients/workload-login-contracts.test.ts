import { request } from 'node:http';
import { exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Backend, type ConformanceServer, startConformanceServer } from './conformance-server.ts';

/**
 * Workload login (Kubernetes Auth, JWT Auth) as the clients' newest release tags send it, against
 * `coffer serve` on each backend:
 * - go-sdk v0.7.0 and v0.8.0, packages/api/auth/jwt_auth_login.go, kubernetes_auth_login.go, models.go:
 *   resty `POST {site}/api/v1/auth/jwt-auth/login` and `/api/v1/auth/kubernetes-auth/login`, no
 *   Authorization, JSON body `{identityId, jwt, organizationSlug}` (organizationSlug omitted when empty),
 *   User-Agent from the client's config (default `infisical-go-sdk`). It reads `accessToken`,
 *   `expiresIn`, `accessTokenMaxTTL` (int64) and `tokenType`; on an error status it reads `message` and
 *   `reqId` (the whole body on 422). Kubernetes Auth sends the token file's bytes untrimmed
 *   (packages/util/auth.go, default /var/run/secrets/kubernetes.io/serviceaccount/token).
 * - Infisical CLI v0.43.121 (go-sdk v0.7.0), packages/util/auth.go HandleJwtAuthLogin and
 *   HandleKubernetesAuthLogin, packages/cmd/login.go: `infisical login --method jwt-auth
 *   --machine-identity-id <id> --jwt <token>` and `--method kubernetes --machine-identity-id <id>
 *   --service-account-token-path <file>`, both with an optional `--organization-slug`; User-Agent `cli`
 *   (packages/api/api.go). It prints `accessToken`; a 401/403 adds "check your credentials" to the error.
 * - External Secrets Operator v2.9.0, providers/v1/infisical/provider.go (go-sdk v0.8.0):
 *   `jwtAuthCredentials` (identityId and jwt from Secrets) → JwtAuthLogin, `kubernetesAuthCredentials`
 *   (identityId, optional serviceAccountTokenPath) → KubernetesAuthLogin; organizationSlug from
 *   `secretsScope.organizationSlug`; the SDK's default User-Agent. Secrets are then read with
 *   `GET /api/v3/secrets/raw` and the bearer token.
 * - Infisical operator v0.11.5 (go-sdk v0.8.0), internal/auth/kubernetes.go, internal/util/auth.go:
 *   `kubernetesAuth` asks the cluster for a TokenRequest (600 s, `serviceAccountTokenAudiences` when
 *   set) and sends it with KubernetesRawServiceAccountTokenLogin; User-Agent `k8-operator/v0.11.5` (InfisicalSecret;
 *   the v1beta1 InfisicalAuth path leaves the SDK default).
 * A successful Kubernetes login needs a real kube-apiserver's TokenReview: those replays are in
 * test/cluster/workload-login.test.ts; here only the refusal the clients handle.
 * Run for real (built from these tags, against `coffer serve` on PGlite and PostgreSQL and the test control
 * plane's TokenRequest tokens, 2026-11): each login request had exactly the fields above and the headers
 * `User-Agent`, `Content-Length`, `Content-Type: application/json`, `Accept-Encoding: gzip` (no Accept, no
 * Authorization); an operator built without its release ldflags says `k8-operator/dev`.
 */
const ISSUER = 'https://issuer.example.com';
/** The error body: the SDK reports `message` and `reqId`. */
const refusal = expect.objectContaining({ statusCode: 401, error: 'UnauthorizedError', message: 'Invalid credentials', reqId: expect.stringMatching(/./) });
const claims: JWTPayload = { iss: ISSUER, aud: 'coffer', sub: 'system:serviceaccount:shop:web' };

interface Client {
  name: string;
  userAgent: string;
  organizationSlug?: string;
}
const jwtClients: Client[] = [
  { name: 'Infisical CLI v0.43.121 `login --method jwt-auth`', userAgent: 'cli' },
  { name: 'Infisical CLI v0.43.121 `login --method jwt-auth --organization-slug`', userAgent: 'cli', organizationSlug: 'clients' },
  { name: 'ESO v2.9.0 jwtAuthCredentials', userAgent: 'infisical-go-sdk' },
  { name: 'ESO v2.9.0 jwtAuthCredentials with secretsScope.organizationSlug', userAgent: 'infisical-go-sdk', organizationSlug: 'clients' },
];
const kubernetesClients: Client[] = [
  { name: 'Infisical CLI v0.43.121 `login --method kubernetes`', userAgent: 'cli' },
  { name: 'ESO v2.9.0 kubernetesAuthCredentials', userAgent: 'infisical-go-sdk', organizationSlug: 'clients' },
  { name: 'Infisical operator v0.11.5 kubernetesAuth', userAgent: 'k8-operator/v0.11.5' },
];

describe.each<Backend>(['pglite', 'postgres'])('workload login as the clients send it, against coffer serve on %s', (backend) => {
  let server: ConformanceServer;
  let signer: Awaited<ReturnType<typeof generateKeyPair>>;
  let jwtIdentityId: string;
  let kubernetesIdentityId: string;

  /**
   * The go-sdk's request as the built clients sent it to `coffer serve` (recorded in front of it): these headers
   * and no others (no Accept, Go's own `Accept-Encoding: gzip`), the body's fields in its struct's order,
   * organizationSlug only when set.
   */
  const login = (method: 'jwt-auth' | 'kubernetes-auth', client: Client, identityId: string, jwt: string) => {
    const body = JSON.stringify({ identityId, jwt, ...(client.organizationSlug ? { organizationSlug: client.organizationSlug } : {}) });
    const headers = { 'user-agent': client.userAgent, 'content-length': Buffer.byteLength(body), 'content-type': 'application/json', 'accept-encoding': 'gzip' };
    return new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
      const sent = request(`${server.url}/api/v1/auth/${method}/login`, { method: 'POST', headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      sent.on('error', reject);
      sent.end(body);
    });
  };
  const sign = (payload: JWTPayload, key = signer.privateKey) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime('5m').sign(key);

  async function projectViewer(name: string): Promise<string> {
    const { identity } = await server.admin('POST', '/api/v1/identities', { name, organizationId: server.orgId, role: 'member' });
    await server.admin('POST', `/api/v2/workspace/${server.projectId}/identity-memberships/${identity.id}`, { role: 'viewer' });
    return identity.id;
  }

  beforeAll(async () => {
    server = await startConformanceServer(backend);
    signer = await generateKeyPair('ES256');
    jwtIdentityId = await projectViewer('jwt-workload');
    await server.admin('POST', `/api/v1/auth/jwt-auth/identities/${jwtIdentityId}`, {
      configurationType: 'static',
      publicKeys: [await exportSPKI(signer.publicKey)],
      boundIssuer: ISSUER,
      boundAudiences: 'coffer',
      boundSubject: claims.sub,
      accessTokenTTL: 600,
      accessTokenMaxTTL: 1200,
    });
    kubernetesIdentityId = await projectViewer('k8s-workload');
    // a cluster nobody listens on: every review fails, as an unreachable cluster does
    await server.admin('POST', `/api/v1/auth/kubernetes-auth/identities/${kubernetesIdentityId}`, { kubernetesHost: 'https://127.0.0.1:9', allowedNamespaces: 'shop' });
  });
  afterAll(async () => server?.stop());

  test.each(jwtClients)('$name: POST /api/v1/auth/jwt-auth/login → the four fields the SDK reads; the token reads secrets', async (client) => {
    const response = await login('jwt-auth', client, jwtIdentityId, await sign(claims));
    expect(response).toEqual({ status: 200, body: { accessToken: expect.stringMatching(/^eyJ/), expiresIn: 600, accessTokenMaxTTL: 1200, tokenType: 'Bearer' } });
    const secrets = await fetch(`${server.url}/api/v3/secrets/raw?workspaceId=${server.projectId}&environment=dev&secretPath=/`, {
      headers: { accept: 'application/json', 'user-agent': client.userAgent, authorization: `Bearer ${response.body.accessToken}` },
    });
    expect(secrets.status).toBe(200);
    expect((((await secrets.json()) as { secrets: unknown }).secrets as { secretKey: string }[]).map((secret) => secret.secretKey)).toContain('BASE');
  });

  // one refusal per client: `coffer serve` throttles an identity after 5 failures from one address
  const jwtRefusals: [string, () => Promise<[string, string]>][] = [
    ['a JWT signed by another key', async () => [jwtIdentityId, await sign(claims, (await generateKeyPair('ES256')).privateKey)]],
    ['another subject', async () => [jwtIdentityId, await sign({ ...claims, sub: 'system:serviceaccount:shop:other' })]],
    ['an identity that does not exist', async () => ['00000000-0000-4000-8000-000000000000', await sign(claims)]],
    ['an expired JWT', async () => [jwtIdentityId, await new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).setExpirationTime('-5m').sign(signer.privateKey)]],
  ];
  test.each(jwtClients.map((client, index) => ({ ...client, refusal: jwtRefusals[index]! })))(
    '$name: $refusal.0 is the 401 whose message and reqId the SDK reports, naming nothing',
    async ({ refusal: [, make], ...client }) => {
      const [identityId, jwt] = await make();
      const response = await login('jwt-auth', client, identityId, jwt);
      expect(response).toEqual({ status: 401, body: refusal });
      expect(JSON.stringify(response.body)).not.toContain(ISSUER);
    },
  );

  test.each(kubernetesClients)('$name: POST /api/v1/auth/kubernetes-auth/login that the cluster cannot confirm is the same 401', async (client) => {
    // the CLI reads a token file given by path: one written by hand may end in a newline, sent as is
    const token = await sign(claims);
    const response = await login('kubernetes-auth', client, kubernetesIdentityId, client.userAgent === 'cli' ? `${token}\n` : token);
    expect(response).toEqual({ status: 401, body: refusal });
  });
});
