// The `oidc` section (company sign-in to the dashboard) as the dashboard uses it: the issuer as a URL,
// the scopes with openid and email always present, allowed domains lower-cased, and the group map.
import type { ConfigFile } from "./schema.js";

export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string | null;
  label: string;
  scopes: string;
  /** Lower-case domains; null: every domain is allowed. */
  allowedEmailDomains: readonly string[] | null;
  admin: { claim: string; value: string } | null;
  workspaces: { claim: string; map: ReadonlyMap<string, { workspaceId: string; role: "admin" | "member" }> } | null;
  passwordSignIn: boolean;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** The settings, or null without an `oidc` section; `fail` names the field of the first error. */
export function oidcSettingsFrom(section: ConfigFile["oidc"], fail: (field: string, message: string) => never): OidcSettings | null {
  if (!section) return null;
  const issuer = new URL(section.issuer);
  if (issuer.protocol !== "https:" && !isLoopback(issuer.hostname)) fail("oidc.issuer", "must be an https URL (http only for a loopback address)");
  const domains = section.allowed_email_domains?.map((domain, i) => {
    const lower = domain.trim().toLowerCase();
    if (!DOMAIN.test(lower)) fail(`oidc.allowed_email_domains[${i}]`, `"${domain}" is not a domain name`);
    return lower;
  });
  const scopes = new Set(section.scopes.split(/\s+/).filter(Boolean));
  scopes.add("openid");
  scopes.add("email");
  return {
    issuer,
    clientId: section.client_id,
    clientSecret: section.client_secret ?? null,
    label: section.label,
    scopes: [...scopes].join(" "),
    allowedEmailDomains: domains ?? null,
    admin: section.admin ?? null,
    workspaces: section.workspaces
      ? {
          claim: section.workspaces.claim,
          map: new Map(Object.entries(section.workspaces.map).map(([group, entry]) => [group, { workspaceId: entry.workspace, role: entry.role }])),
        }
      : null,
    passwordSignIn: section.password_sign_in,
  };
}

export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
