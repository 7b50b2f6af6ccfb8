// The OpenID Connect side of company sign-in (openid-client): discovery, once per issuer and client
// and again after a failure, the authorization URL with PKCE, state and nonce, and the code grant
// whose ID token openid-client checks (signature, issuer, audience, expiry, nonce). A refusal is an
// OidcRefusal whose code says why, for the sign-in page; the detail goes to the log only.
import type * as OpenIdClient from "openid-client";
import type { CompanyRefusal } from "../accounts/company-claims.js";
import { isLoopback, type OidcSettings } from "../config/oidc-settings.js";

/** Every phase of a call to the issuer (discovery, token, keys) gives up after this. */
const ISSUER_TIMEOUT_SECONDS = 10;

export type OidcRefusalCode =
  | "oidc_unavailable"
  | "oidc_state_missing"
  | "oidc_denied"
  | "oidc_wrong_audience"
  | "oidc_wrong_issuer"
  | "oidc_token_expired"
  | "oidc_nonce_mismatch"
  | "oidc_failed"
  | CompanyRefusal;

export class OidcRefusal extends Error {
  constructor(
    readonly code: OidcRefusalCode,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** What the browser must bring back to the callback: kept sealed in a short-lived cookie. */
export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
}

/** Loaded with the first company sign-in: a gateway without one never pays for it. */
function openIdClient(): Promise<typeof OpenIdClient> {
  return import("openid-client");
}

export class OidcClients {
  readonly #configurations = new Map<string, Promise<OpenIdClient.Configuration>>();

  async authorizationUrl(settings: OidcSettings, redirectUri: string): Promise<{ url: URL; flow: OidcFlow }> {
    const client = await openIdClient();
    const configuration = await this.#configuration(settings);
    const flow = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: "S256",
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url, flow };
  }

  /** Exchanges the callback's code; the verified ID token's claims, or an OidcRefusal. */
  async claims(settings: OidcSettings, callbackUrl: URL, flow: OidcFlow): Promise<Record<string, unknown>> {
    const client = await openIdClient();
    const configuration = await this.#configuration(settings);
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new OidcRefusal("oidc_failed", "the token response has no ID token");
      return claims;
    } catch (error) {
      throw refusalFrom(client, error);
    }
  }

  async #configuration(settings: OidcSettings): Promise<OpenIdClient.Configuration> {
    const client = await openIdClient();
    const key = JSON.stringify([settings.issuer.href, settings.clientId, settings.clientSecret]);
    let found = this.#configurations.get(key);
    if (!found) {
      found = client
        .discovery(settings.issuer, settings.clientId, settings.clientSecret ?? undefined, settings.clientSecret ? undefined : client.None(), {
          timeout: ISSUER_TIMEOUT_SECONDS,
          // http only for an issuer on this machine (tests, a local provider); oidc-settings.ts refuses it elsewhere.
          ...(isLoopback(settings.issuer.hostname) && { execute: [client.allowInsecureRequests] }),
        })
        .then((configuration) => {
          configuration.timeout = ISSUER_TIMEOUT_SECONDS;
          return configuration;
        });
      // A failed discovery is tried again by the next sign-in, not remembered.
      found.catch(() => this.#configurations.delete(key));
      this.#configurations.set(key, found);
    }
    return found.catch((error: unknown) => {
      throw new OidcRefusal("oidc_unavailable", `discovery at ${settings.issuer.href} failed: ${String((error as Error)?.message ?? error)}`);
    });
  }
}

/** The reason a code grant failed, from openid-client's error and its causes. */
function refusalFrom(client: typeof OpenIdClient, error: unknown): OidcRefusal {
  if (error instanceof OidcRefusal) return error;
  if (error instanceof client.AuthorizationResponseError) return new OidcRefusal("oidc_denied", `${error.error}: ${error.error_description ?? ""}`);
  const message = String((error as Error)?.message ?? error);
  for (let cause: unknown = error; cause; cause = (cause as { cause?: unknown }).cause) {
    const code = (cause as { code?: unknown }).code;
    const claim = (cause as { claim?: unknown }).claim;
    if (code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED" || code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED") {
      const detailed = (cause as { cause?: { claim?: unknown } }).cause?.claim ?? claim;
      if (detailed === "aud" || detailed === "azp") return new OidcRefusal("oidc_wrong_audience", message);
      if (detailed === "iss") return new OidcRefusal("oidc_wrong_issuer", message);
      if (detailed === "nonce") return new OidcRefusal("oidc_nonce_mismatch", message);
      if (detailed === "exp" || detailed === "iat" || detailed === "nbf") return new OidcRefusal("oidc_token_expired", message);
    }
    if (claim === "aud") return new OidcRefusal("oidc_wrong_audience", message);
  }
  return new OidcRefusal("oidc_failed", message);
}
