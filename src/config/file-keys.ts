// The provider keys of the config file (catalog.source: file): the file lists them, the database
// keeps which are disabled (store/file-key-states-store.ts), so an operator can test, disable and
// enable them like the database catalog's keys, and a key the upstream refuses (401/403) is
// disabled for every process. A key is named by "fk_" and a hash of its provider and fingerprint
// under the server secret: stable while the file and the secret are, never the key itself.
import { createHash } from "node:crypto";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";
import type { GatewayConfig } from "./gateway-config.js";

/** A shared key of the catalog served now, from the database (pk_…) or from the file (fk_…). */
export interface CatalogKeyInfo {
  id: string;
  provider: string;
  label: string;
  last4: string;
  status: "active" | "disabled";
  /** When it was added (null for a key of the file: it was written there). */
  createdAt: number | null;
  source: "database" | "file";
}

export interface FileKey {
  info: CatalogKeyInfo;
  fingerprint: string;
  secret: string;
}

export function fileKeyId(provider: string, fingerprint: string): string {
  return `fk_${createHash("sha256").update(`${provider}\0${fingerprint}`).digest("hex").slice(0, 24)}`;
}

/** Every shared key of the config's providers with its state, in the file's order. */
export async function fileKeysOf(store: Store, config: GatewayConfig): Promise<FileKey[]> {
  const states = new Map((await store.fileKeys.all()).map((s) => [`${s.provider}\0${s.fingerprint}`, s]));
  const keys: FileKey[] = [];
  const seen = new Set<string>();
  for (const provider of config.providers.values()) {
    for (const [i, secret] of provider.sharedKeys.entries()) {
      const fingerprint = store.fileKeys.fingerprint(secret);
      const id = fileKeyId(provider.name, fingerprint);
      if (seen.has(id)) continue;
      seen.add(id);
      const status = states.get(`${provider.name}\0${fingerprint}`)?.status ?? "active";
      keys.push({
        info: { id, provider: provider.name, label: `keys[${i}] in the config file`, last4: secret.trim().slice(-4), status, createdAt: null, source: "file" },
        fingerprint,
        secret,
      });
    }
  }
  return keys;
}

/** The file's keys disabled now (their secrets): what a config snapshot's RefusedKeys starts with. */
export async function disabledFileKeys(store: Store, config: GatewayConfig): Promise<string[]> {
  if (config.catalogSource !== "file") return [];
  return (await fileKeysOf(store, config)).filter((k) => k.info.status === "disabled").map((k) => k.secret);
}

/** Sets a file key's status with its audit row; the key as it is now. Null when no key of the file has this id. */
export async function setFileKeyStatus(store: Store, config: GatewayConfig, actor: AuditActor, id: string, status: CatalogKeyInfo["status"]): Promise<CatalogKeyInfo | null> {
  const key = (await fileKeysOf(store, config)).find((k) => k.info.id === id);
  if (!key) return null;
  return store.audited(actor, async (tx) => {
    const before = await tx.fileKeys.setStatus({ provider: key.info.provider, fingerprint: key.fingerprint, last4: key.info.last4, status, reason: "an operator" });
    if (before !== status)
      await tx.record({
        action: `catalog.provider_key.${status === "active" ? "enable" : "disable"}`,
        targetType: "provider_key",
        targetId: id,
        before: { provider: key.info.provider, last4: key.info.last4, status: before, source: "file" },
        after: { provider: key.info.provider, last4: key.info.last4, status, source: "file" },
      });
    return { ...key.info, status };
  });
}

/** The upstream refused this file key (401/403): disabled for every process, audited. False when it was not active. */
export async function disableRefusedFileKey(store: Store, config: GatewayConfig, actor: AuditActor, provider: string, secret: string, status: number): Promise<boolean> {
  const fingerprint = store.fileKeys.fingerprint(secret);
  const id = fileKeyId(provider, fingerprint);
  const reason = `the upstream answered HTTP ${status}`;
  const last4 = secret.trim().slice(-4);
  if (!config.providers.get(provider)?.sharedKeys.includes(secret)) return false;
  return store.audited(actor, async (tx) => {
    const before = await tx.fileKeys.setStatus({ provider, fingerprint, last4, status: "disabled", reason });
    if (before === "disabled") return false;
    await tx.record({
      action: "catalog.provider_key.auto_disable",
      targetType: "provider_key",
      targetId: id,
      before: { status: "active" },
      after: { status: "disabled", reason, provider, last4, source: "file" },
    });
    return true;
  });
}
