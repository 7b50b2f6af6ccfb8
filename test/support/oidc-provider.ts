// A real OpenID provider (oidc-provider) on 127.0.0.1 for company sign-in tests, behind a small
// proxy that can rewrite the ID token of a token response (re-signed with the provider's own key,
// so only the claim under test is wrong): a wrong audience, an expired token, a replayed one.
// Logins are finished at once as `user`; every client's grant covers the scopes asked for.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, decodeJwt, type JWK } from "jose";
import Provider from "oidc-provider";

export interface OidcUser {
  sub: string;
  email: string;
  email_verified: boolean;
  groups?: string[];
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next login is. */
  user: OidcUser;
  /** Rewrites the claims of the next token response's ID token (then resets). */
  tamper: ((claims: Record<string, unknown>) => Record<string, unknown>) | null;
  /** Sends this ID token instead of the next one issued (then resets). */
  replaceIdToken: string | null;
  /** The last ID token the provider issued (before any rewrite). */
  lastIdToken: string | null;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

export async function startOidcProvider(redirectUris: string[]): Promise<TestOidcProvider> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: "test-key-1", alg: "RS256", use: "sig" };
  const front = createServer();
  const frontPort = await listen(front);
  const issuer = `http://127.0.0.1:${frontPort}`;
  const state: TestOidcProvider = {
    issuer,
    clientId: "model-gateway",
    clientSecret: "a-client-secret-for-the-tests-0123456789",
    user: { sub: "person-1", email: "person@example.com", email_verified: true },
    tamper: null,
    replaceIdToken: null,
    lastIdToken: null,
    close: async () => {
      await new Promise((resolve) => front.close(resolve));
      await new Promise((resolve) => back.close(resolve));
    },
  };
  const provider = new Provider(issuer, {
    clients: [{ client_id: state.clientId, client_secret: state.clientSecret, redirect_uris: redirectUris, grant_types: ["authorization_code"], response_types: ["code"] }],
    jwks: { keys: [jwk] },
    cookies: { keys: ["cookie-key-for-tests"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], groups: ["groups"] },
    scopes: ["openid", "email", "profile", "groups"],
    conformIdTokenClaims: false,
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: state.user.email, email_verified: state.user.email_verified, groups: state.user.groups ?? [] }),
    }),
    loadExistingGrant: async (ctx: any) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile groups");
      grant.addOIDCClaims(["email", "email_verified", "groups"]);
      await grant.save();
      return grant;
    },
  } as any);
  const callback = provider.callback();
  const back = createServer((req, res) => {
    if (req.url?.startsWith("/interaction/")) {
      void provider.interactionFinished(req, res, { login: { accountId: state.user.sub } }, { mergeWithLastSubmission: false }).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    void callback(req, res);
  });
  const backPort = await listen(back);
  front.on("request", (req: IncomingMessage, res: ServerResponse) => forward(req, res, backPort, state, jwk));
  return state;
}

function forward(req: IncomingMessage, res: ServerResponse, port: number, state: TestOidcProvider, jwk: JWK): void {
  const upstream = httpRequest({ host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    if (!req.url?.startsWith("/token")) {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    answer.on("data", (chunk: Buffer) => chunks.push(chunk));
    answer.on("end", () => {
      void rewrite(Buffer.concat(chunks).toString("utf8"), state, jwk).then((body) => {
        const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(body);
      });
    });
  });
  req.pipe(upstream);
}

async function rewrite(text: string, state: TestOidcProvider, jwk: JWK): Promise<string> {
  const body = JSON.parse(text) as { id_token?: string };
  if (!body.id_token) return text;
  state.lastIdToken = body.id_token;
  if (state.replaceIdToken) {
    body.id_token = state.replaceIdToken;
    state.replaceIdToken = null;
  } else if (state.tamper) {
    const claims = state.tamper(decodeJwt(body.id_token));
    state.tamper = null;
    const { importJWK } = await import("jose");
    const key = await importJWK(jwk, "RS256");
    body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: jwk.kid!, typ: "JWT" }).sign(key);
  }
  return JSON.stringify(body);
}
