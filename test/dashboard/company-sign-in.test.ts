// Company sign-in (issue 41, item 1) against a real OpenID provider (oidc-provider) on 127.0.0.1, on
// SQLite and PostgreSQL: the authorization code flow with PKCE signs a person in, creating them just
// in time or linking an existing account by verified email; the admin claim and the group map set
// the administrator flag and workspace roles at every sign-in (audited). A wrong audience, an expired
// ID token, a replayed one (nonce), an unverified email, a domain outside the list and a callback
// without the browser's flow cookie are each refused with their reason, creating nothing. Password
// sign-in can be turned off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startOidcProvider, type TestOidcProvider } from "../support/oidc-provider.js";
import { DashboardClient, PASSWORD, signedInAccount } from "./support.js";

/** The address the gateway says it has (server.public_url): what the provider sends browsers back to. */
const PUBLIC_URL = "http://gateway.test";
const CALLBACK = `${PUBLIC_URL}/dashboard/api/auth/oidc/callback`;

/** One browser's cookies for one site (names are distinct across paths here, so paths are ignored). */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === "") this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
}

async function get(url: string, jar: CookieJar): Promise<Response> {
  const response = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
  jar.take(response);
  return response;
}

describe.each(DATABASE_KINDS)("company sign-in with OpenID Connect, on %s", (kind) => {
  let idp: TestOidcProvider;
  let gateway: TestGateway;
  let workspaceId: string;

  beforeAll(async () => {
    idp = await startOidcProvider([CALLBACK]);
    // The workspace the group map names must exist before the config names it: made on a first gateway.
    gateway = await startGateway(config("placeholder"), { kind });
    const owner = await signedInAccount(gateway);
    workspaceId = (await gateway.app.ctx.store.workspaces.create("Atlas", owner.account.id)).id;
    const database = gateway.database;
    await gateway.app.close();
    gateway = await startGateway(config(workspaceId), { kind, database });
  });
  afterAll(async () => {
    await gateway?.close();
    await gateway?.database.drop();
    await idp?.close();
  });

  function config(workspace: string): string {
    return `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
  public_url: "${PUBLIC_URL}"
oidc:
  issuer: "${idp.issuer}"
  client_id: ${idp.clientId}
  client_secret: ${idp.clientSecret}
  label: Example SSO
  scopes: openid email profile groups
  allowed_email_domains: [example.com]
  admin: { claim: groups, value: gateway-admins }
  workspaces:
    map:
      team-atlas: { workspace: ${workspace}, role: admin }
`;
  }

  /** A browser signing in: the gateway sends it to the provider, which logs `idp.user` in and sends it back. */
  async function signIn(): Promise<{ location: string; jar: CookieJar }> {
    const jar = new CookieJar();
    const idpJar = new CookieJar();
    const start = await get(`${gateway.url}/dashboard/api/auth/oidc/start`, jar);
    expect(start.status).toBe(302);
    let location = start.headers.get("location")!;
    expect(location.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    const authorization = new URL(location);
    expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorization.searchParams.get("redirect_uri")).toBe(CALLBACK);
    for (let hop = 0; hop < 10 && location.startsWith(idp.issuer); hop++) {
      const response = await get(location, idpJar);
      expect([302, 303], await response.clone().text()).toContain(response.status);
      location = new URL(response.headers.get("location")!, location).href;
    }
    expect(location.startsWith(`${CALLBACK}?`)).toBe(true);
    const back = await get(location.replace(PUBLIC_URL, gateway.url), jar);
    expect(back.status).toBe(302);
    return { location: back.headers.get("location")!, jar };
  }

  async function sessionOf(jar: CookieJar) {
    const response = await fetch(`${gateway.url}/dashboard/api/session`, { headers: { cookie: jar.header() } });
    return { status: response.status, body: (await response.json()) as { account?: { id: string; email: string; is_admin: boolean } } };
  }

  const store = () => gateway.app.ctx.store;

  it("signs a new person in just in time, an administrator by the claim, a workspace admin by the group", async () => {
    idp.user = { sub: "alice-1", email: `alice-${kind}@example.com`, email_verified: true, groups: ["gateway-admins", "team-atlas"] };
    const { location, jar } = await signIn();
    expect(location).toBe("/dashboard");
    const session = await sessionOf(jar);
    expect(session.status).toBe(200);
    expect(session.body.account).toMatchObject({ email: `alice-${kind}@example.com`, is_admin: true });
    const id = session.body.account!.id;
    expect(await store().workspaces.roleOf(workspaceId, id)).toBe("admin");
    expect(await store().accounts.passwordHash(id)).toBeNull();
    const actions = (await store().audit.list({ limit: 50 })).map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(["account.create", "workspace.member_add"]));
    // The flow cookie is used once: the same callback again is refused.
    expect(jar.get("mgw_oidc")).toBeUndefined();
  });

  it("links an existing account by verified email; the claims take away what they no longer give", async () => {
    const existing = await signedInAccount(gateway, { admin: true, email: `bob-${kind}@example.com` });
    await store().workspaces.addMember(workspaceId, existing.account.id, "member");
    idp.user = { sub: "bob-1", email: `Bob-${kind}@Example.com`, email_verified: true, groups: ["other"] };
    const { location, jar } = await signIn();
    expect(location).toBe("/dashboard");
    const session = await sessionOf(jar);
    expect(session.body.account).toMatchObject({ id: existing.account.id, is_admin: false });
    expect(await store().workspaces.roleOf(workspaceId, existing.account.id)).toBeNull();
    // The password still works while password sign-in is on.
    expect((await new DashboardClient(gateway.url).signIn(`bob-${kind}@example.com`, PASSWORD)).status).toBe(200);
  });

  const refusals: Array<{ name: string; reason: string; arrange: () => void }> = [
    { name: "an ID token for another client (wrong audience)", reason: "oidc_wrong_audience", arrange: () => (idp.tamper = (claims) => ({ ...claims, aud: "another-client" })) },
    {
      name: "an expired ID token",
      reason: "oidc_token_expired",
      arrange: () => (idp.tamper = (claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })),
    },
    { name: "an ID token replayed from an earlier sign-in (nonce)", reason: "oidc_nonce_mismatch", arrange: () => (idp.replaceIdToken = idp.lastIdToken) },
    { name: "an email outside the allowed domains", reason: "oidc_email_domain", arrange: () => (idp.user = { ...idp.user, email: `carol-${kind}@elsewhere.org` }) },
    { name: "an unverified email", reason: "oidc_email_unverified", arrange: () => (idp.user = { ...idp.user, email_verified: false }) },
  ];
  for (const { name, reason, arrange } of refusals) {
    it(`refuses ${name} with ${reason}, creating nothing and signing nobody in`, async () => {
      idp.user = { sub: `dave-${reason}`, email: `dave-${reason}-${kind}@example.com`, email_verified: true, groups: ["gateway-admins"] };
      expect(idp.lastIdToken, "an earlier test signed in").not.toBeNull();
      arrange();
      const accountsBefore = await store().accounts.count();
      const { location, jar } = await signIn();
      expect(location).toBe(`/dashboard?oidc_error=${reason}`);
      expect((await sessionOf(jar)).status).toBe(401);
      expect(await store().accounts.count()).toBe(accountsBefore);
      expect(gateway.logs.some((line) => line.msg === "company sign-in refused" && line.reason === reason)).toBe(true);
    });
  }

  it("refuses a callback without this browser's flow cookie", async () => {
    const response = await get(`${gateway.url}/dashboard/api/auth/oidc/callback?code=stolen&state=whatever`, new CookieJar());
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/dashboard?oidc_error=oidc_state_missing");
  });

  it("tells the sign-in page about company sign-in", async () => {
    const config = await new DashboardClient(gateway.url).get("/config");
    expect(config.body).toEqual({ signup: "closed", password_sign_in: true, company_sign_in: { label: "Example SSO" } });
  });
});

describe("company sign-in only", () => {
  it("refuses password sign-in and sign-up when oidc.password_sign_in is false", async () => {
    const gateway = await startGateway(
      `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
  signup: open
oidc:
  issuer: "http://127.0.0.1:9/"
  client_id: gateway
  password_sign_in: false
`,
    );
    try {
      const person = await gateway.createAccount({ email: "eve@example.com" });
      expect(person.account.id).toMatch(/^acct_/);
      const client = new DashboardClient(gateway.url);
      const signin = await client.signIn("eve@example.com", PASSWORD);
      expect(signin.status).toBe(403);
      expect(signin.body.error.code).toBe("password_sign_in_disabled");
      const signup = await client.post("/signup", { email: "frank@example.com", password: PASSWORD });
      expect(signup.status).toBe(403);
      expect(signup.body.error.code).toBe("password_sign_in_disabled");
      expect((await client.get("/config")).body).toMatchObject({ password_sign_in: false, company_sign_in: { label: "company sign-in" } });
      // The issuer cannot be reached: the start of a sign-in says so instead of failing.
      const start = await fetch(`${gateway.url}/dashboard/api/auth/oidc/start`, { redirect: "manual" });
      expect(start.status).toBe(302);
      expect(start.headers.get("location")).toBe("/dashboard?oidc_error=oidc_unavailable");
    } finally {
      await gateway.close();
    }
  });

  it("refuses an issuer that is not https (except on this machine) when the config is loaded", async () => {
    await expect(
      startGateway(`${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
oidc:
  issuer: "http://login.example.com/"
  client_id: gateway
`),
    ).rejects.toThrow(/oidc\.issuer: must be an https URL/);
  });
});
