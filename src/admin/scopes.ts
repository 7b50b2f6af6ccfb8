// The scopes an admin token may hold (docs/operations.md, "Admin API"); each /admin/v1 route needs one.
export const ADMIN_SCOPES = [
  "accounts:read",
  "accounts:write",
  /** Set-password links for existing accounts: whoever holds one signs in as that account (never an administrator's). */
  "passwords:write",
  "keys:read",
  "keys:write",
  "credits:read",
  "credits:write",
  "usage:read",
  "audit:read",
  "provider_keys:read",
  "provider_keys:write",
  "config:write",
  "catalog:read",
  "catalog:write",
  /** A workspace's budgets and allowed models (ADR 0037). */
  "workspaces:read",
  "workspaces:write",
  /** Budgets on request tags (docs/billing.md, "Tags and tag budgets"). */
  "tags:read",
  "tags:write",
  /** Alert subscriptions, their deliveries and test events (ADR 0040). */
  "alerts:read",
  "alerts:write",
] as const;

export type AdminScope = (typeof ADMIN_SCOPES)[number];

export function isAdminScope(value: string): value is AdminScope {
  return (ADMIN_SCOPES as readonly string[]).includes(value);
}
