// The response cache's opt-in of a key or a workspace (ADR 0044; docs/configuration.md, "Response
// cache"): read, set (audited) and removed, for the admin API. The TTL must lie within the config's
// bounds and `gateway` scope needs cache.allow_gateway_scope.
import { z } from "zod";
import type { CacheSettings } from "../config/cache-settings.js";
import { invalidRequest } from "../errors/catalogue.js";
import type { AuditActor } from "../store/audit-store.js";
import { cacheSubject, type CacheSetting, type CacheSubjectKind } from "../store/cache-settings-store.js";
import type { Store } from "../store/index.js";

export const cacheSettingBody = z.strictObject({
  ttl_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  scope: z.enum(["account", "gateway"]).optional(),
});

export type CacheSettingBody = z.infer<typeof cacheSettingBody>;

export interface CacheSettingView {
  subject_type: CacheSubjectKind;
  id: string;
  /** Null: this key or workspace does not use the cache (a key without one follows its workspace). */
  cache: { ttl_seconds: number; scope: "account" | "gateway"; updated_at: string } | null;
}

export async function cacheSettingView(store: Store, kind: CacheSubjectKind, id: string): Promise<CacheSettingView> {
  const setting = (await store.cacheSettings.read([cacheSubject(kind, id)])).get(cacheSubject(kind, id)) ?? null;
  return { subject_type: kind, id, cache: setting && { ttl_seconds: setting.ttlSeconds, scope: setting.scope, updated_at: new Date(setting.updatedAt).toISOString() } };
}

/** The setting a body makes, within the config's bounds; throws invalid_request naming the field. */
export function cacheSettingFrom(body: CacheSettingBody, settings: CacheSettings, now: number): CacheSetting {
  const ttlSeconds = body.ttl_seconds ?? settings.defaultTtlSeconds;
  if (ttlSeconds < settings.minTtlSeconds || ttlSeconds > settings.maxTtlSeconds) {
    throw invalidRequest("ttl_seconds", `ttl_seconds must be from ${settings.minTtlSeconds} to ${settings.maxTtlSeconds} (cache.min_ttl_seconds, cache.max_ttl_seconds).`);
  }
  const scope = body.scope ?? "account";
  if (scope === "gateway" && !settings.allowGatewayScope)
    throw invalidRequest("scope", "scope gateway shares answers across accounts; the gateway's config does not allow it (cache.allow_gateway_scope).");
  return { ttlSeconds, scope, updatedAt: now };
}

/** Writes or removes (setting null) the row and its audit entry in one transaction. */
export async function writeCacheSetting(store: Store, actor: AuditActor, kind: CacheSubjectKind, id: string, setting: CacheSetting | null): Promise<void> {
  const subject = cacheSubject(kind, id);
  await store.audited(actor, async (tx) => {
    const before = (await tx.cacheSettings.read([subject])).get(subject) ?? null;
    if (setting === null) await tx.cacheSettings.remove(subject);
    else await tx.cacheSettings.write(subject, setting);
    const fields = (s: CacheSetting | null) => s && { ttl_seconds: s.ttlSeconds, scope: s.scope };
    await tx.record({ action: `${kind}.cache`, targetType: kind, targetId: id, before: fields(before), after: fields(setting) });
  });
}
