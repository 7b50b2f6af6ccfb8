// What a company sign-in's verified ID token says about the person, read against the `oidc`
// settings: the email (verified, at an allowed domain), whether the administrator claim is there,
// and the workspace roles the group claim maps to. Pure: the dashboard applies it (company-sign-in.ts).
import type { OidcSettings } from "../config/oidc-settings.js";

export type CompanyRefusal = "oidc_email_missing" | "oidc_email_unverified" | "oidc_email_domain";

export interface CompanyIdentity {
  email: string;
  /** The issuer's subject, for the audit log. */
  subject: string;
  /** Whether the administrator claim is present; null when no admin claim is configured (left as it is). */
  isAdmin: boolean | null;
  /** The role in each mapped workspace the person's groups give; a mapped workspace absent here: no membership. */
  workspaceRoles: ReadonlyMap<string, "admin" | "member">;
}

const MAX_EMAIL_LENGTH = 254;

export function readCompanyClaims(claims: Readonly<Record<string, unknown>>, settings: OidcSettings): CompanyIdentity | { refused: CompanyRefusal } {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (email === "" || email.length > MAX_EMAIL_LENGTH || !/^[^@\s]+@[^@\s]+$/.test(email)) return { refused: "oidc_email_missing" };
  // An unverified email must never link to (take over) an existing account, nor create one.
  if (claims.email_verified !== true) return { refused: "oidc_email_unverified" };
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (settings.allowedEmailDomains && !settings.allowedEmailDomains.includes(domain)) return { refused: "oidc_email_domain" };
  const isAdmin = settings.admin ? claimHolds(claims[settings.admin.claim], settings.admin.value) : null;
  const workspaceRoles = new Map<string, "admin" | "member">();
  if (settings.workspaces) {
    for (const group of claimValues(claims[settings.workspaces.claim])) {
      const entry = settings.workspaces.map.get(group);
      // Two groups mapping to one workspace: the higher role wins.
      if (entry && workspaceRoles.get(entry.workspaceId) !== "admin") workspaceRoles.set(entry.workspaceId, entry.role);
    }
  }
  return { email, subject: String(claims.sub ?? ""), isAdmin, workspaceRoles };
}

function claimValues(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === "string").slice(0, 1000);
  return [];
}

function claimHolds(value: unknown, wanted: string): boolean {
  if (value === true) return wanted === "true";
  return claimValues(value).includes(wanted);
}
