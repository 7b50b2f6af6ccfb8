// `gateway admin token create|list|revoke`: admin tokens for the admin API (/admin/v1). The raw token
// is printed once; only its hash is stored.
import { ADMIN_SCOPES, isAdminScope } from "../../admin/scopes.js";
import { createAdminToken, revokeAdminToken } from "../../admin/operations.js";
import type { AdminToken } from "../../store/admin-tokens-store.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, requireOption, table, UsageError, type CliIo } from "../io.js";
import { cliActor } from "./cli-actor.js";

function tokenJson(t: AdminToken) {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    scopes: t.scopes,
    created_at: new Date(t.createdAt).toISOString(),
    revoked_at: t.revokedAt === null ? null : new Date(t.revokedAt).toISOString(),
  };
}

export async function adminTokensCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<void> {
  switch (sub) {
    case "create": {
      const { values, json } = parseCommand(args, { name: { type: "string" }, scope: { type: "string", multiple: true } }, []);
      const name = requireOption(values, "name");
      if (name.length > 100) throw new UsageError("--name: at most 100 characters");
      const given: unknown = (values as Record<string, unknown>).scope;
      const scopes = Array.isArray(given) ? given.map(String) : [];
      if (scopes.length === 0) throw new UsageError(`--scope is required (repeat it); scopes: ${ADMIN_SCOPES.join(", ")}`);
      for (const scope of scopes) if (!isAdminScope(scope)) throw new UsageError(`--scope: unknown scope "${scope}" (scopes: ${ADMIN_SCOPES.join(", ")})`);
      const { token, raw } = await store.audited(cliActor(), (tx) => createAdminToken(tx, { name, scopes }));
      return emit(
        io,
        json,
        { ...tokenJson(token), token: raw },
        () => `created admin token ${token.id} (${token.name}) with scopes ${token.scopes.join(" ")}\n${raw}\nThis is the only time the token is shown; store it now.`,
      );
    }
    case "list": {
      const { json } = parseCommand(args, {}, []);
      const tokens = await store.adminTokens.list();
      return emit(io, json, tokens.map(tokenJson), () =>
        table(tokens.map((t) => ({ id: t.id, name: t.name, prefix: t.prefix, scopes: t.scopes.join(" "), revoked: t.revokedAt === null ? "no" : "yes" }))),
      );
    }
    case "revoke": {
      const { positionals, json } = parseCommand(args, {}, ["ID"]);
      const token = await store.audited(cliActor(), (tx) => revokeAdminToken(tx, positionals[0]!));
      return emit(io, json, tokenJson(token), () => `admin token ${token.id} is revoked`);
    }
    default:
      throw new UsageError("usage: gateway admin token create --name N --scope S [--scope S ...] | list | revoke ID");
  }
}
