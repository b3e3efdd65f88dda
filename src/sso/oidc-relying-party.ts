import * as oidc from 'openid-client';
import { BadRequestError, UnauthorizedError } from '../errors.ts';

/** Seconds of clock difference tolerated on the ID token's exp, iat and nbf. */
export const ID_TOKEN_CLOCK_TOLERANCE_SECONDS = 60;
const DISCOVERY_TIMEOUT_SECONDS = 10;

export interface RelyingPartySettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Identifies the settings: a configuration discovered for other settings is never reused. */
  version: string;
}

/** Loopback issuers may be plain http (a provider on the same machine); every other must be https. */
export function isLoopbackUrl(url: URL): boolean {
  return ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/**
 * The OIDC relying party, on openid-client: discovery (kept per organization until its settings change),
 * the authorization URL with PKCE (S256), state and nonce, and the code exchange, in which openid-client
 * checks the ID token: its signature against the issuer's JWKS (non-repudiation checks on, so `alg: none`
 * and a foreign key fail), issuer, audience, expiry within ID_TOKEN_CLOCK_TOLERANCE_SECONDS, and nonce.
 */
export class OidcRelyingParty {
  readonly #configurations = new Map<string, { version: string; configuration: Promise<oidc.Configuration> }>();

  async #configuration(orgId: string, settings: RelyingPartySettings): Promise<oidc.Configuration> {
    const known = this.#configurations.get(orgId);
    if (known?.version === settings.version) return known.configuration;
    const issuer = new URL(settings.issuer);
    if (issuer.protocol !== 'https:' && !isLoopbackUrl(issuer)) throw new BadRequestError('The issuer must be an https:// URL', 'SsoIssuerInsecure');
    const configuration = oidc.discovery(
      issuer,
      settings.clientId,
      { [oidc.clockTolerance]: ID_TOKEN_CLOCK_TOLERANCE_SECONDS },
      oidc.ClientSecretBasic(settings.clientSecret),
      {
        timeout: DISCOVERY_TIMEOUT_SECONDS,
        execute: [oidc.enableNonRepudiationChecks, ...(issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [])],
      },
    );
    this.#configurations.set(orgId, { version: settings.version, configuration });
    configuration.catch(() => {
      if (this.#configurations.get(orgId)?.configuration === configuration) this.#configurations.delete(orgId);
    });
    return configuration;
  }

  /** The provider's authorization URL for one sign-in. 502-like failures of discovery answer 400 SsoDiscoveryFailed. */
  async authorizationUrl(
    orgId: string,
    settings: RelyingPartySettings,
    request: { redirectUri: string; scopes: string; state: string; nonce: string; codeVerifier: string },
  ) {
    const configuration = await this.#discovered(orgId, settings);
    return oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: request.redirectUri,
      scope: request.scopes,
      state: request.state,
      nonce: request.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /** Exchanges the code of `callbackUrl` and answers the verified ID token's claims; 401 SsoTokenInvalid (with a reason code) otherwise. */
  async exchange(orgId: string, settings: RelyingPartySettings, callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }) {
    const configuration = await this.#discovered(orgId, settings);
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        pkceCodeVerifier: checks.codeVerifier,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new UnauthorizedError('The identity provider answered no ID token', 'SsoTokenInvalid');
      return claims;
    } catch (error) {
      if (error instanceof UnauthorizedError) throw error;
      throw new SsoVerificationError(reasonOf(error));
    }
  }

  async #discovered(orgId: string, settings: RelyingPartySettings): Promise<oidc.Configuration> {
    try {
      return await this.#configuration(orgId, settings);
    } catch (error) {
      if (error instanceof BadRequestError) throw error;
      throw new BadRequestError("The identity provider's discovery document could not be read", 'SsoDiscoveryFailed');
    }
  }
}

/** A sign-in the provider's answer did not verify; `reason` (a library error code, never a claim value) goes to the audit log. */
export class SsoVerificationError extends UnauthorizedError {
  readonly reason: string;

  constructor(reason: string) {
    super("Single sign-on failed: the identity provider's answer did not verify", 'SsoTokenInvalid');
    this.reason = reason;
  }
}

/** openid-client's error code (OAUTH_JWT_CLAIM_COMPARISON_FAILED …) or the provider's OAuth error name (invalid_grant …). */
function reasonOf(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError) return error.error;
  if (error instanceof oidc.AuthorizationResponseError) return error.error;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'unknown';
}
