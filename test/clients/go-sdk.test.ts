import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { type LeaseTarget, startLeaseTarget } from '../support/lease-target.ts';
import { type Backend, startConformanceServer } from './conformance-server.ts';

/**
 * github.com/infisical/go-sdk v0.8.0 (test/clients/go-sdk/main.go, dynamic_secrets.go): every call it offers,
 * against a fresh `coffer serve` on each backend, dynamic-secret leases on a PostgreSQL server of the test's own.
 * Calls for features Coffer does not offer must fail with the API's 404, not pass silently.
 */

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
  'DynamicSecrets().List': 'orders-db',
  'DynamicSecrets().GetByName': 'orders-db sql-database default 1h max 2h',
  'DynamicSecrets().Leases().Create': undefined,
  'DynamicSecrets().Leases().List': '1 held, the new one among them: true',
  'DynamicSecrets().Leases().GetById': 'same lease: true, of orders-db',
  'DynamicSecrets().Leases().RenewById': 'expiry moved by 30m0s',
  'DynamicSecrets().Leases().DeleteById': 'same lease: true',
};
const LEASE_CREATE = 'DynamicSecrets().Leases().Create';
/**
 * Renewals Coffer refuses, with the words Infisical's operator v0.11.5 looks for in the SDK's error
 * (internal/services/infisicaldynamicsecret/reconciler.go RenewDynamicSecretLease): either makes it lease anew.
 */
const REFUSED_RENEWALS: Record<string, { status: number; words: string }> = {
  'DynamicSecrets().Leases().RenewById(past the max TTL)': { status: 400, words: 'TTL cannot be larger than max ttl' },
  'DynamicSecrets().Leases().RenewById(a revoked lease)': { status: 404, words: 'Dynamic secret lease with ID' },
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

/**
 * Runs the program, handing each result to `onResult` as it is printed; the program waits on stdin after the lease
 * (a line goes on). Answers the results by call.
 */
async function runProgram(env: Record<string, string>, onResult: (result: CallResult, goOn: () => void) => Promise<void>): Promise<Map<string, CallResult>> {
  const child = spawn(inject('goSdkProgram'), [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr.on('data', (chunk) => stderr.push(String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const results = new Map<string, CallResult>();
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const result = JSON.parse(line) as CallResult;
      results.set(result.call, result);
      await onResult(result, () => child.stdin.write('\n'));
    }
    const code = await exited;
    if (code !== 0) throw new Error(`the Go SDK program exited with ${code}: ${stderr.join('')}`);
    return results;
  } finally {
    clearTimeout(killer);
    child.kill('SIGKILL');
  }
}

let target: LeaseTarget;
beforeAll(async () => {
  target = await startLeaseTarget();
});
afterAll(async () => target?.destroy());

describe.each<Backend>(['pglite', 'postgres'])('Go SDK v0.8.0 against coffer serve on %s', (backend) => {
  test('every call', async () => {
    // access tokens live 7 s: after 3 s the SDK's 5 s renewal window is reached and it renews
    const server = await startConformanceServer(backend, 7);
    try {
      await server.admin('POST', '/api/v1/dynamic-secrets', {
        projectSlug: server.projectSlug,
        environmentSlug: 'dev',
        path: '/',
        name: 'orders-db',
        provider: target.provider(),
        defaultTTL: '1h',
        maxTTL: '2h',
      });
      let leased: { username: string; password: string; expireAt: string; lasts: string; dynamicSecret: string } | undefined;
      const env = {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        COFFER_URL: server.url,
        CLIENT_ID: server.clientId,
        CLIENT_SECRET: server.clientSecret,
        PROJECT_ID: server.projectId,
        PROJECT_SLUG: server.projectSlug,
        DYNAMIC_SECRET: 'orders-db',
        RENEW_AFTER_MS: '3000',
        JWT_IDENTITY_ID: server.identityId,
        JWT: await jwtLogin(server),
      };
      const results = await runProgram(env, async (result, goOn) => {
        if (result.call !== LEASE_CREATE || !result.ok) return;
        // while the lease is held: its role signs in, valid until the lease's expiry (to the second)
        leased = JSON.parse(result.detail!);
        expect(leased).toMatchObject({ username: expect.stringMatching(/^coffer_/), lasts: '1h0m0s', dynamicSecret: 'orders-db' });
        expect(await target.signsIn(leased!.username, leased!.password)).toBe(true);
        expect((await target.validUntil(leased!.username))?.getTime()).toBe(Math.floor(Date.parse(leased!.expireAt) / 1000) * 1000);
        goOn();
      });
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
      for (const [call, { status, words }] of Object.entries(REFUSED_RENEWALS)) {
        expect(results.get(call), call).toMatchObject({ ok: false, status, detail: expect.stringContaining(words) });
      }
      expect(results.size).toBe(Object.keys(SUPPORTED).length + NOT_OFFERED.length + REFUSED_LOGINS.length + Object.keys(REFUSED_RENEWALS).length + 1);
      // revoked: the role is gone and its password no longer signs in
      expect(await target.signsIn(leased!.username, leased!.password)).toBe(false);
      expect(await target.validUntil(leased!.username)).toBeUndefined();
      const events = await server.auditEvents();
      expect(events).toEqual(expect.arrayContaining(['create-dynamic-secret-lease', 'renew-dynamic-secret-lease', 'revoke-dynamic-secret-lease']));
      expect(events).toContain('renew-identity-access-token');
      expect(events.at(-1)).toBe('revoke-identity-access-token');
    } finally {
      await server.stop();
    }
  });
});
