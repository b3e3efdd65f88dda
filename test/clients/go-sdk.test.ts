import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, inject, test } from 'vitest';
import { type Backend, startConformanceServer } from './conformance-server.ts';

/**
 * github.com/infisical/go-sdk v0.8.0 (test/clients/go-sdk/main.go): every call it offers,
 * against a fresh `coffer serve` on each backend. Calls for features Coffer does not offer
 * must fail with the API's 404, not pass silently.
 */
const run = promisify(execFile);

interface CallResult {
  call: string;
  ok: boolean;
  status?: number;
  detail?: string;
}

const SUPPORTED: Record<string, string | RegExp | undefined> = {
  'Auth().UniversalAuthLogin': undefined,
  'Auth().GetAccessToken': /^length \d{3,}$/,
  'Secrets().Create': undefined,
  'Secrets().Batch().Create': 'GO_BATCH_A=a,GO_BATCH_B=b',
  'Secrets().Update': 'updated',
  'Secrets().Retrieve': 'updated',
  'Secrets().Retrieve(ProjectSlug, IncludeImports)': 'imported',
  'Secrets().Retrieve(Version)': 'created',
  'Secrets().ListSecrets': 'BASE=base-value,GO_BATCH_A=a,GO_BATCH_B=b,GO_SDK=updated',
  'Secrets().ListSecrets(ProjectSlug, IncludeImports, Recursive)': 'BASE=base-value,FROM_IMPORT=imported,GO_BATCH_A=a,GO_BATCH_B=b,GO_SDK=updated',
  'Secrets().List': 'BASE=base-value,GO_BATCH_A=a,GO_BATCH_B=b,GO_SDK=updated',
  'Secrets().Delete': 'GO_SDK',
  'Folders().Create': 'go-folder',
  'Folders().List': 'go-folder,shared',
  'Folders().Update': 'go-renamed',
  'Folders().Delete': 'go-renamed',
  'Auth().JwtAuthLogin': /^length \d{3,}$/,
  'Auth().JwtAuthLogin, then Secrets().List': 'BASE=base-value,GO_BATCH_A=a,GO_BATCH_B=b',
  'automatic token renewal, then Secrets().List': undefined,
  'Auth().RevokeAccessToken': undefined,
  'DynamicSecrets().List': '0 dynamic secrets',
};
const NOT_OFFERED = ['Kms().Keys().GetByName'];
/** Logins the SDK makes that Coffer refuses with its 401: a malformed JWT, and Kubernetes Auth for an identity without it. */
const REFUSED_LOGINS = ['Auth().JwtAuthLogin(a malformed JWT)', 'Auth().KubernetesRawServiceAccountTokenLogin'];

/** JWT Auth on the conformance identity with a key pair of the test's own; answers the signed JWT. */
async function jwtLogin(server: Awaited<ReturnType<typeof startConformanceServer>>): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  await server.admin('POST', `/api/v1/auth/jwt-auth/identities/${server.identityId}`, {
    configurationType: 'static',
    publicKeys: [await exportSPKI(publicKey)],
    boundIssuer: 'https://issuer.example',
    boundAudiences: 'coffer',
    boundSubject: 'go-sdk',
  });
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer('https://issuer.example')
    .setAudience('coffer')
    .setSubject('go-sdk')
    .setExpirationTime('10m')
    .sign(privateKey);
}

describe.each<Backend>(['pglite', 'postgres'])('Go SDK v0.8.0 against coffer serve on %s', (backend) => {
  test('every call', async () => {
    // access tokens live 7 s: after 3 s the SDK's 5 s renewal window is reached and it renews
    const server = await startConformanceServer(backend, 7);
    try {
      const { stdout } = await run(inject('goSdkProgram'), [], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          COFFER_URL: server.url,
          CLIENT_ID: server.clientId,
          CLIENT_SECRET: server.clientSecret,
          PROJECT_ID: server.projectId,
          PROJECT_SLUG: server.projectSlug,
          RENEW_AFTER_MS: '3000',
          JWT_IDENTITY_ID: server.identityId,
          JWT: await jwtLogin(server),
        },
        timeout: 120_000,
      });
      const results = new Map(
        stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as CallResult)
          .map((result) => [result.call, result]),
      );
      for (const [call, expected] of Object.entries(SUPPORTED)) {
        const result = results.get(call);
        expect(result, `${call} was not made`).toBeDefined();
        expect(result!.ok, `${call}: ${result!.detail}`).toBe(true);
        if (typeof expected === 'string') expect(result!.detail, call).toBe(expected);
        if (expected instanceof RegExp) expect(result!.detail, call).toMatch(expected);
      }
      const notModified = results.get('Secrets().ListSecrets(IfNoneMatch)');
      expect(notModified, 'an unchanged listing with its ETag is 304 (NotModifiedError)').toMatchObject({ ok: false, status: 304 });
      for (const call of NOT_OFFERED) expect(results.get(call), call).toMatchObject({ ok: false, status: 404 });
      for (const call of REFUSED_LOGINS) expect(results.get(call), call).toMatchObject({ ok: false, status: 401 });
      expect(results.size).toBe(Object.keys(SUPPORTED).length + NOT_OFFERED.length + REFUSED_LOGINS.length + 1);
      const events = await server.auditEvents();
      expect(events).toContain('renew-identity-access-token');
      expect(events.at(-1)).toBe('revoke-identity-access-token');
    } finally {
      await server.stop();
    }
  });
});
