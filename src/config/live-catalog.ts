// The live catalog (docs/decisions/0033-live-catalog.md): with catalog.source: database, the
// providers, models and tiers are numbered versions in the database that the admin API changes;
// every process serves the latest within a second (catalog-watch.ts) and requests in flight finish
// on the version they started with (each request keeps its config snapshot). Every change is checked
// by the config file's schema and catalogue build with every error at once, written with its audit
// row in one transaction, and a rollback is itself a new version. With catalog.source: file the
// file is the source of truth and every change here is refused, except whether each of the file's
// keys is used (file-keys.ts): an operator disables and enables them, and a refused one is disabled.
import { GatewayError } from "../errors/catalogue.js";
import type { AuditActor } from "../store/audit-store.js";
import type { CatalogVersion, ProviderKeyInfo } from "../store/catalog-store.js";
import type { AuditedTransaction, Store } from "../store/index.js";
import { catalogDocumentOf, checkCatalogDocument, configWithCatalog, documentText, type CatalogDocument } from "./catalog-document.js";
import { applyEntityChange, entriesOf, type EntityChange } from "./catalog-entities.js";
import { withoutPlainValues, type StoredValueWrites } from "./mcp-catalog.js";
import { ConfigError, type ConfigIssue, type GatewayConfig } from "./gateway-config.js";
import { disableRefusedFileKey, fileKeysOf, setFileKeyStatus, type CatalogKeyInfo } from "./file-keys.js";
import { planPriceImport, type PriceChange, type PriceFileFormat, type PriceImportIssue } from "./price-import.js";

/** The audit row of one entry's change: the entry before and after (each null when absent). */
interface EntityAudit {
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
}

/** What changed between two documents, entry by entry, with each changed entry before and after. */
export interface CatalogDiff {
  providers: SectionDiff;
  models: SectionDiff;
  tiers: SectionDiff;
  /** The live catalog's MCP servers, as the document writes them (values only as set/last four). */
  mcp_servers: SectionDiff;
  demo: { before: boolean | null; after: boolean | null } | null;
}

export interface SectionDiff {
  added: Record<string, unknown>;
  removed: Record<string, unknown>;
  changed: Record<string, { before: unknown; after: unknown }>;
}

export class LiveCatalog {
  constructor(
    private readonly store: Store,
    /** The config serving now (its file, its catalog source). */
    private readonly running: () => GatewayConfig,
    /** Swaps the latest catalog in on this process (the other processes follow through the watch). */
    private readonly applyLatest: () => Promise<void>,
  ) {}

  get source(): "file" | "database" {
    return this.running().catalogSource;
  }

  /** The catalog served: from the database (with its version) or from the file (version null). */
  async current(): Promise<{ version: CatalogVersion | null; document: CatalogDocument }> {
    if (this.source === "file") return { version: null, document: catalogDocumentOf(this.running().file) };
    const latest = await this.store.catalog.latest();
    if (!latest) throw new GatewayError("internal_error");
    return { version: latest, document: JSON.parse(latest.document) as CatalogDocument };
  }

  async version(version: number): Promise<{ version: CatalogVersion; document: CatalogDocument }> {
    const found = await this.store.catalog.get(version);
    if (!found) throw new GatewayError("not_found", `No catalog version ${version}.`, { param: "version" });
    return { version: found, document: JSON.parse(found.document) as CatalogDocument };
  }

  versions(limit: number, beforeVersion?: number) {
    return this.store.catalog.list(limit, beforeVersion);
  }

  /**
   * Replaces the catalog with `raw`, made from `baseVersion`: 400 listing every issue when it does
   * not build with the running file's settings, 409 when another change came first, nothing changed
   * in either case. Served by this process when it answers.
   */
  async replace(actor: AuditActor, raw: unknown, baseVersion: number, reason = "edit"): Promise<CatalogVersion> {
    this.refuseWhenFromFile();
    const checked = checkCatalogDocument(raw, this.running().file);
    if (checked.document === null) throw invalidCatalog(checked.issues);
    return this.append(actor, checked.document, baseVersion, reason);
  }

  /**
   * One entry's change (catalog-entities.ts: create, update, disable, enable, delete) made from
   * `baseVersion`: the edited document is checked like a whole one (400 with every issue) and
   * appended as one new version (409 when another change came first), audited with the entry
   * before and after. The admin API's per-entity routes, the CLI and the console call this.
   */
  async edit(actor: AuditActor, change: EntityChange, baseVersion: number): Promise<{ version: CatalogVersion; before: unknown; after: unknown }> {
    this.refuseWhenFromFile();
    const base = await this.store.catalog.get(baseVersion);
    if (!base) throw new GatewayError("conflict", `No catalog version ${baseVersion}: reload the catalog and make the change again.`, { param: "base_version" });
    const document = JSON.parse(base.document) as CatalogDocument;
    // An MCP server's header and environment values go to the encrypted store, never the document.
    const values = change.kind === "mcp_server" ? mcpValuesOf(document, change) : null;
    const edit = applyEntityChange(document, values?.change ?? change);
    const checked = checkCatalogDocument(edit.document, this.running().file);
    if (checked.document === null) throw invalidCatalog(checked.issues);
    const audit = { action: `catalog.${change.kind}.${change.op}`, targetType: "catalog", targetId: `${change.kind}:${change.name}`, before: edit.before, after: edit.after };
    const writeValues = values && ((tx: AuditedTransaction) => tx.catalog.setMcpSecrets(change.name, values.valuesOf(edit.after)));
    const version = await this.append(actor, checked.document, baseVersion, `${change.op} ${change.kind.replace("_", " ")} ${change.name}`, audit, writeValues ?? undefined);
    return { version, before: edit.before, after: edit.after };
  }

  /** A new version whose document is version `version`'s: restores exactly that catalog. */
  async rollback(actor: AuditActor, version: number): Promise<CatalogVersion> {
    this.refuseWhenFromFile();
    const target = await this.version(version);
    const latest = await this.store.catalog.latest();
    const checked = checkCatalogDocument(target.document, this.running().file);
    // A version that built when it was made may not with today's file (a tier renamed there, say).
    if (checked.document === null) throw invalidCatalog(checked.issues);
    return this.append(actor, target.document, latest!.version, `rollback to ${version}`);
  }

  /**
   * A bulk price import (price-import.ts) made from `baseVersion`: every change and every problem.
   * Applied (`apply`) only when there is no problem and something changes, as ONE new version,
   * audited as catalog.price_import; a file with any problem changes nothing (400 listing them all).
   */
  async importPrices(
    actor: AuditActor,
    input: { format: PriceFileFormat; content: string; baseVersion: number; apply: boolean },
  ): Promise<{ changes: PriceChange[]; issues: PriceImportIssue[]; version: CatalogVersion | null }> {
    this.refuseWhenFromFile();
    const base = await this.version(input.baseVersion);
    const plan = planPriceImport(base.document, input.format, input.content);
    if (!input.apply) return { changes: plan.changes, issues: plan.issues, version: null };
    if (plan.issues.length > 0) {
      const issues = plan.issues.map((i) => ({ field: i.row > 0 ? `rows[${i.row}].${i.field}` : i.field, message: i.model === null ? i.message : `${i.model}: ${i.message}` }));
      throw new GatewayError("invalid_request", `The price file has ${issues.length} problem(s); nothing was changed.`, { param: "content", errors: issues });
    }
    if (plan.changes.length === 0) throw new GatewayError("invalid_request", "The price file changes no price; nothing was changed.", { param: "content" });
    return { changes: plan.changes, issues: [], version: await this.replace(actor, plan.document, input.baseVersion, "price import") };
  }

  diff(before: CatalogDocument, after: CatalogDocument): CatalogDiff {
    const models = (document: CatalogDocument) => Object.fromEntries(document.models.map((m) => [m.id, m]));
    const demoBefore = before.demo ?? null;
    const demoAfter = after.demo ?? null;
    return {
      providers: sectionDiff(before.providers, after.providers),
      models: sectionDiff(models(before), models(after)),
      tiers: sectionDiff(before.tiers, after.tiers),
      mcp_servers: sectionDiff(before.mcp_servers ?? {}, after.mcp_servers ?? {}),
      demo: demoBefore === demoAfter ? null : { before: demoBefore, after: demoAfter },
    };
  }

  /** The shared keys of the catalog served: the database's, or the file's with their states (file-keys.ts). */
  async providerKeys(): Promise<CatalogKeyInfo[]> {
    if (this.source === "file") return (await fileKeysOf(this.store, this.running())).map((k) => k.info);
    return (await this.store.catalog.providerKeys()).map(databaseKey);
  }

  /** One shared key with its secret, for its test request only; null when there is none. */
  async keyWithSecret(id: string): Promise<{ info: CatalogKeyInfo; secret: string } | null> {
    if (this.source === "file") {
      const key = (await fileKeysOf(this.store, this.running())).find((k) => k.info.id === id);
      return key ? { info: key.info, secret: key.secret } : null;
    }
    const found = await this.store.catalog.withSecret(id);
    return found ? { info: databaseKey(found.info), secret: found.secret } : null;
  }

  async addProviderKey(actor: AuditActor, input: { provider: string; key: string; label: string }): Promise<ProviderKeyInfo> {
    this.refuseWhenFromFile();
    const { document } = await this.current();
    if (!(input.provider in document.providers)) throw new GatewayError("not_found", `No provider ${input.provider} in the catalog.`, { param: "provider" });
    const added = await this.store.audited(actor, async (tx) => {
      const info = await tx.catalog.addProviderKey(input);
      await tx.record({ action: "catalog.provider_key.add", targetType: "provider_key", targetId: info.id, before: null, after: keyAudit(info) });
      return info;
    });
    await this.applyLatest();
    return added;
  }

  async removeProviderKey(actor: AuditActor, id: string): Promise<ProviderKeyInfo> {
    this.refuseWhenFromFile();
    const removed = await this.store.audited(actor, async (tx) => {
      const info = await tx.catalog.removeProviderKey(id);
      await tx.record({ action: "catalog.provider_key.remove", targetType: "provider_key", targetId: info.id, before: keyAudit(info), after: null });
      return info;
    });
    await this.applyLatest();
    return removed;
  }

  async setProviderKeyStatus(actor: AuditActor, id: string, status: ProviderKeyInfo["status"]): Promise<CatalogKeyInfo> {
    if (this.source === "file") {
      // The file's keys stay in the file; whether each is used is the database's (file-keys.ts).
      const updated = await setFileKeyStatus(this.store, this.running(), actor, id, status);
      if (!updated) throw new GatewayError("not_found", `No provider key ${id}.`);
      await this.applyLatest();
      return updated;
    }
    const updated = await this.store.audited(actor, async (tx) => {
      const before = await tx.catalog.setProviderKeyStatus(id, status);
      if (before.status !== status)
        await tx.record({
          action: `catalog.provider_key.${status === "active" ? "enable" : "disable"}`,
          targetType: "provider_key",
          targetId: id,
          before: { status: before.status },
          after: { status, provider: before.provider },
        });
      return databaseKey({ ...before, status });
    });
    await this.applyLatest();
    return updated;
  }

  /**
   * The upstream answered 401 or 403 to a shared key of the catalog (the database's or the file's):
   * the key is disabled for every process, audited, until an operator enables it again. False when
   * it is no active catalog key.
   */
  async disableRefusedKey(provider: string, secret: string, status: number): Promise<boolean> {
    const actor: AuditActor = { type: "cli", id: null, name: "gateway (upstream refused the key)", clientAddress: null, requestId: null };
    if (this.source === "file") {
      const disabled = await disableRefusedFileKey(this.store, this.running(), actor, provider, secret, status);
      if (disabled) await this.applyLatest();
      return disabled;
    }
    const disabled = await this.store.audited(actor, async (tx) => {
      const info = await tx.catalog.disableBySecret(provider, secret);
      if (info)
        await tx.record({
          action: "catalog.provider_key.auto_disable",
          targetType: "provider_key",
          targetId: info.id,
          before: { status: "active" },
          after: { status: "disabled", reason: `the upstream answered HTTP ${status}`, provider },
        });
      return info !== null;
    });
    if (disabled) await this.applyLatest();
    return disabled;
  }

  private async append(
    actor: AuditActor,
    document: CatalogDocument,
    baseVersion: number,
    reason: string,
    entityAudit?: EntityAudit,
    writeValues?: (tx: AuditedTransaction) => Promise<void>,
  ): Promise<CatalogVersion> {
    const previous = await this.store.catalog.get(baseVersion);
    const previousDocument = previous ? (JSON.parse(previous.document) as CatalogDocument) : null;
    const changes = previousDocument ? this.diff(previousDocument, document) : null;
    // A server the new version no longer has takes its stored values with it (a rollback does not bring them back).
    const goneServers = Object.keys(previousDocument?.mcp_servers ?? {}).filter((name) => !(name in (document.mcp_servers ?? {})));
    const appended = await this.store.audited(actor, async (tx) => {
      const version = await tx.catalog.append({ document: documentText(document), baseVersion, actor: actorName(actor), reason });
      for (const name of goneServers) await tx.catalog.setMcpSecrets(name, []);
      await writeValues?.(tx);
      await tx.record(
        entityAudit
          ? { ...entityAudit, before: { version: baseVersion, entry: entityAudit.before }, after: { version: version.version, entry: entityAudit.after } }
          : {
              action: reason.startsWith("rollback") ? "catalog.rollback" : reason === "price import" ? "catalog.price_import" : "catalog.update",
              targetType: "catalog",
              targetId: String(version.version),
              before: changes && { version: baseVersion, ...sideOf(changes, "before") },
              after: changes && { version: version.version, ...sideOf(changes, "after") },
            },
      );
      return version;
    });
    await this.applyLatest();
    return appended;
  }

  private refuseWhenFromFile(): void {
    if (this.source === "file") {
      const file = this.running().sourcePath ?? "the config file";
      throw new GatewayError("conflict", `The catalog is read-only here: catalog.source is file, so ${file} is its source of truth. Change the file and reload.`, {
        code: "catalog_read_only",
      });
    }
  }
}

/**
 * The config to serve with catalog.source: database: the file's settings with the latest catalog
 * version and the active provider keys. An empty catalog is seeded once from the file (its keys
 * moved into the database, encrypted), by whichever process gets there first.
 */
export async function configFromDatabase(store: Store, config: GatewayConfig, actor: AuditActor): Promise<GatewayConfig> {
  // The head first: a change committed while the rest is read leaves a newer head behind, so the
  // watch reads again. Read last, the head could name a change whose keys this read missed, and
  // every later read would find the same version and never swap it in.
  const head = await store.catalog.head();
  let latest = await store.catalog.latest();
  if (latest === null) {
    try {
      latest = await store.audited(actor, async (tx) => {
        const seeded = await tx.catalog.append({
          document: documentText(catalogDocumentOf(config.file)),
          baseVersion: null,
          actor: actorName(actor),
          reason: `seed from ${config.sourcePath ?? "the defaults"}`,
        });
        for (const [provider, entry] of Object.entries(config.file.providers)) {
          for (const [i, key] of entry.keys.entries()) await tx.catalog.addProviderKey({ provider, key, label: `from the config file (keys[${i}])` });
        }
        await tx.record({ action: "catalog.seed", targetType: "catalog", targetId: "1", before: null, after: { version: 1, source: config.sourcePath ?? "(defaults)" } });
        return seeded;
      });
    } catch (error) {
      // Another process seeded it first.
      if (!(error instanceof GatewayError && error.type === "conflict")) throw error;
      latest = await store.catalog.latest();
    }
  }
  const keys = await store.catalog.activeSecrets();
  const mcpValues = await store.catalog.mcpSecrets();
  return configWithCatalog(config, JSON.parse(latest!.document) as CatalogDocument, keys, { version: latest!.version, head }, mcpValues);
}

/** An MCP server change without its plain values, and the values to store for the entry after it. */
function mcpValuesOf(document: CatalogDocument, change: EntityChange): { change: EntityChange; valuesOf: (after: Record<string, unknown> | null) => StoredValueWrites } {
  const before = entriesOf(document, "mcp_server").find((e) => e.name === change.name)?.entry ?? null;
  if (change.op === "create") {
    const { entry, valuesOf } = withoutPlainValues(change.entry, null);
    return { change: { ...change, entry }, valuesOf };
  }
  if (change.op === "update") {
    const { entry, valuesOf } = withoutPlainValues(change.set, before);
    return { change: { ...change, set: entry }, valuesOf };
  }
  return { change, valuesOf: withoutPlainValues({}, before).valuesOf };
}

function invalidCatalog(issues: ConfigIssue[]): GatewayError {
  const error = ConfigError.of("catalog", issues);
  return new GatewayError("invalid_request", error.message, { param: issues[0]?.field || "document", errors: issues });
}

function sectionDiff(before: Record<string, unknown>, after: Record<string, unknown>): SectionDiff {
  const diff: SectionDiff = { added: {}, removed: {}, changed: {} };
  for (const [name, value] of Object.entries(after)) {
    if (!(name in before)) diff.added[name] = value;
    else if (JSON.stringify(before[name]) !== JSON.stringify(value)) diff.changed[name] = { before: before[name], after: value };
  }
  for (const [name, value] of Object.entries(before)) if (!(name in after)) diff.removed[name] = value;
  return diff;
}

/** The audit row's before (each changed or removed entry as it was) or after (each changed or added entry as it is now). */
function sideOf(diff: CatalogDiff, which: "before" | "after"): Record<string, unknown> {
  const side = (section: SectionDiff) => ({
    ...(which === "before" ? section.removed : section.added),
    ...Object.fromEntries(Object.entries(section.changed).map(([k, v]) => [k, v[which]])),
  });
  const mcpServers = side(diff.mcp_servers);
  return {
    providers: side(diff.providers),
    models: side(diff.models),
    tiers: side(diff.tiers),
    ...(Object.keys(mcpServers).length > 0 && { mcp_servers: mcpServers }),
    ...(diff.demo && { demo: diff.demo[which] }),
  };
}

function databaseKey(info: ProviderKeyInfo): CatalogKeyInfo {
  return { ...info, source: "database" };
}

function keyAudit(info: ProviderKeyInfo) {
  return { provider: info.provider, label: info.label, last4: info.last4, status: info.status };
}

function actorName(actor: AuditActor): string {
  return actor.name === null ? actor.type : `${actor.type}:${actor.name}`;
}
