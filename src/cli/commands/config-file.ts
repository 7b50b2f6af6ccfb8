// `gateway config check FILE`: validates a config file without serving: every error, each with its
// field path, exit 1; a summary and exit 0 when it is valid. `gateway config export`: the catalog
// served (the database's latest version with catalog.source: database, else the file's) written as
// a config file that `check` accepts and that reproduces it (the catalog's MCP servers as mcp.servers).
// Provider keys and MCP servers' header and environment values are secrets and are not exported: the
// file says which are stored and where to add them.
import { writeFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { stringify } from "yaml";
import { emit, parseCommand, UsageError, type CliIo } from "../io.js";

export async function configFileCommand(sub: string | undefined, args: string[], io: CliIo): Promise<number> {
  if (sub === "check") return check(args, io);
  if (sub === "export") return exportCatalog(args, io);
  throw new UsageError("usage: gateway config check FILE | gateway config export [--output FILE]");
}

async function check(args: string[], io: CliIo): Promise<number> {
  const { positionals, json } = parseCommand(args, {}, ["FILE"]);
  const file = resolvePath(io.cwd, positionals[0]!);
  const { loadConfig, ConfigError } = await import("../../config/load.js");
  try {
    const config = loadConfig({ ...io.env, GATEWAY_CONFIG: file }, io.cwd);
    const summary = { file, valid: true, providers: config.providers.size, models: config.models.size, tiers: config.tiers.size, catalog_source: config.catalogSource };
    emit(io, json, summary, () => `${file}: valid: ${summary.providers} providers, ${summary.models} models, ${summary.tiers} tiers (catalog.source: ${summary.catalog_source})`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const issues = error.issues.length > 0 ? error.issues : [{ field: "", message: error.message }];
    if (json) emit(io, true, { file, valid: false, errors: issues }, () => "");
    else io.stderr(`${error.message}\n${file}: ${issues.length} ${issues.length === 1 ? "error" : "errors"}\n`);
    return 1;
  }
}

async function exportCatalog(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, { output: { type: "string" } }, []);
  const [{ loadConfig }, { catalogDocumentOf }, { resolveServerSecret }] = await Promise.all([
    import("../../config/load.js"),
    import("../../config/catalog-document.js"),
    import("../../config/server-secret.js"),
  ]);
  const config = loadConfig(io.env, io.cwd);
  let header: string;
  let document = catalogDocumentOf(config.file);
  const keyCounts = new Map<string, number>();
  if (config.catalogSource === "database") {
    const { openStore } = await import("../../store/index.js");
    const store = await openStore({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath, secret: resolveServerSecret(config) });
    try {
      const latest = await store.catalog.latest();
      if (latest === null) throw new UsageError("the database holds no catalog yet: start the gateway once (it seeds it from the config file)");
      document = JSON.parse(latest.document) as typeof document;
      for (const key of await store.catalog.providerKeys()) if (key.status === "active") keyCounts.set(key.provider, (keyCounts.get(key.provider) ?? 0) + 1);
      header = `The catalog of version ${latest.version} (${latest.reason}, ${new Date(latest.createdAt).toISOString()}), from ${store.handle.description}.`;
    } finally {
      await store.close();
    }
  } else {
    for (const [name, provider] of Object.entries(config.file.providers)) keyCounts.set(name, provider.keys.length);
    header = `The catalog of ${config.sourcePath ?? "the defaults"}.`;
  }
  const providers = Object.fromEntries(Object.entries(document.providers).map(([name, provider]) => [name, { ...provider, keys: [] as string[] }]));
  const withKeys = [...keyCounts].filter(([, n]) => n > 0).map(([name, n]) => `${name} (${n})`);
  // The live catalog's MCP servers as the file's mcp.servers, their header and environment values left out like keys.
  const mcpServers = Object.entries(document.mcp_servers ?? {}).map(([name, server]) => {
    const rest: Partial<typeof server> = { ...server };
    delete rest.headers;
    delete rest.env;
    return { name, ...rest };
  });
  const withValues = Object.entries(document.mcp_servers ?? {})
    .map(([name, server]) => [name, [...Object.keys(server.headers ?? {}).map((h) => `header ${h}`), ...Object.keys(server.env ?? {}).map((e) => `env ${e}`)]] as const)
    .filter(([, values]) => values.length > 0)
    .map(([name, values]) => `${name} (${values.join(", ")})`);
  const text = [
    `# ${header}`,
    "# Provider keys are secrets and are not exported" +
      (withKeys.length > 0 ? `; keys stored for: ${withKeys.join(", ")}. Add them as keys: [\${ENV_VAR}] or with POST /admin/v1/catalog/provider-keys.` : "."),
    ...(withValues.length > 0 ? [`# MCP server values are secrets and are not exported: ${withValues.join("; ")}. Add them as headers or env with \${ENV_VAR}.`] : []),
    stringify({
      ...(document.demo === undefined ? {} : { demo: document.demo }),
      providers,
      models: document.models,
      tiers: document.tiers,
      ...(mcpServers.length > 0 ? { mcp: { servers: mcpServers } } : {}),
    }),
  ].join("\n");
  const output = values.output;
  if (typeof output === "string" && output !== "") {
    writeFileSync(resolvePath(io.cwd, output), text);
    io.stderr(`wrote ${resolvePath(io.cwd, output)}\n`);
  } else {
    io.stdout(text);
  }
  return 0;
}

function resolvePath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}
