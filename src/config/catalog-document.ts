// The catalog as a document: the config file's `demo`, `providers` (without their keys), `models`
// and `tiers` sections, exactly as the file writes them, and the live catalog's own MCP servers
// (`mcp_servers`, without their header and environment values: mcp-catalog.ts). It is what the database keeps as numbered
// versions (catalog.source: database), what the admin API reads and writes, what a rollback
// restores and what `gateway config export` writes. A document is checked by the same schema and
// the same catalogue build as the file, reporting every error at once, each with its field path.
import { z } from "zod";
import { buildCatalog } from "./build-catalog.js";
import { withDemoCatalog } from "./config-file.js";
import { ConfigError, issuesOf, type ConfigIssue, type GatewayConfig } from "./gateway-config.js";
import { catalogMcpServersSchema, checkCatalogMcpServers, mcpSettingsWithCatalog } from "./mcp-catalog.js";
import { mcpSettingsFrom } from "./mcp-settings.js";
import { identifier, modelSchema, providerSchema, tierSchema, type ConfigFile } from "./schema.js";

export const catalogDocumentSchema = z.strictObject({
  demo: z.boolean().optional(),
  providers: z.record(identifier, providerSchema.omit({ keys: true })).default({}),
  models: z.array(modelSchema).max(10_000).default([]),
  tiers: z.record(identifier, tierSchema).default({}),
  /** Absent in a document seeded from the file: the file's MCP servers stay in its `mcp` section. */
  mcp_servers: catalogMcpServersSchema.optional(),
});

export type CatalogDocument = z.infer<typeof catalogDocumentSchema>;

/** The catalog sections of a validated config file, without the providers' keys. */
export function catalogDocumentOf(file: ConfigFile): CatalogDocument {
  const providers = Object.fromEntries(
    Object.entries(file.providers).map(([name, provider]) => {
      const rest: Partial<typeof provider> = { ...provider };
      delete rest.keys;
      return [name, rest as Omit<typeof provider, "keys">];
    }),
  );
  return { ...(file.demo === undefined ? {} : { demo: file.demo }), providers, models: file.models, tiers: file.tiers };
}

/** A document as stored: canonical JSON, so equal catalogs are equal text. */
export function documentText(document: CatalogDocument): string {
  return JSON.stringify(document);
}

/**
 * Checks a document against the schema and the catalogue build with the running file's other
 * settings (the default tier, for one): every error, each with its field path; the parsed document
 * when there is none.
 */
export function checkCatalogDocument(raw: unknown, file: ConfigFile): { document: CatalogDocument; issues: [] } | { document: null; issues: ConfigIssue[] } {
  const parsed = catalogDocumentSchema.safeParse(raw);
  if (!parsed.success) return { document: null, issues: issuesOf(parsed.error.issues) };
  try {
    buildCatalog(withDemoCatalog(fileWith(file, parsed.data, new Map()), "catalog"), "catalog");
  } catch (error) {
    if (error instanceof ConfigError) return { document: null, issues: error.issues };
    throw error;
  }
  const mcpIssues = checkCatalogMcpServers(parsed.data.mcp_servers, file);
  if (mcpIssues.length > 0) return { document: null, issues: mcpIssues };
  return { document: parsed.data, issues: [] };
}

/**
 * The running config with its catalog taken from a document and the providers' keys from the
 * database (catalog.source: database), its MCP servers the file's and the document's (with their
 * stored values, by mcpSecretKey). Throws ConfigError (every issue) when the pair does not build.
 */
export function configWithCatalog(
  config: GatewayConfig,
  document: CatalogDocument,
  keys: ReadonlyMap<string, readonly string[]>,
  at: { version: number; head: bigint },
  mcpValues: ReadonlyMap<string, string> = new Map(),
): GatewayConfig {
  const label = `catalog version ${at.version}`;
  const built = buildCatalog(withDemoCatalog(fileWith(config.file, document, keys), label), label);
  // From the file again: `config` may be a snapshot whose MCP servers already include the catalog's.
  const fromFile = mcpSettingsFrom(config.file.mcp, (field, message) => {
    throw new ConfigError(`${config.sourcePath ?? "(defaults)"}: ${field}: ${message}`);
  });
  const mcp = mcpSettingsWithCatalog(fromFile, config.file, document.mcp_servers, mcpValues);
  // The version names the file and the catalog's head (versions and key changes), so a reload after
  // either changed is never "unchanged".
  return { ...config, ...built, mcp, version: `${config.fileVersion}+catalog.${at.head}`, catalogVersion: at.version };
}

function fileWith(file: ConfigFile, document: CatalogDocument, keys: ReadonlyMap<string, readonly string[]>): ConfigFile {
  const providers = Object.fromEntries(Object.entries(document.providers).map(([name, provider]) => [name, { ...provider, keys: [...(keys.get(name) ?? [])] }]));
  const combined: ConfigFile = { ...file, providers, models: document.models, tiers: document.tiers };
  if (document.demo === undefined) delete combined.demo;
  else combined.demo = document.demo;
  return combined;
}
