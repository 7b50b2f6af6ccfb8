#!/usr/bin/env node
// The `gateway` command. Every subcommand takes --json; bad input exits non-zero with one line.
import cluster from "node:cluster";
import { readFileSync, realpathSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import type { GatewayConfig } from "../config/load.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Store } from "../store/index.js";
import { emit, parseCommand, UsageError, type CliIo } from "./io.js";

// Each command loads what it needs when it runs: `gateway --help` and `--version` load no config,
// store or server (their CPU is measured by bench/startup.ts), and an admin command no server.

const USAGE = `usage: gateway <command>
  --version                               print the version
  serve [--workers N]                     start the gateway (what npm start runs); N processes share the port
                                          (default: 2 on SQLite, the number of cores on PostgreSQL; 1: one process)
  migrate                                 apply database migrations
  admin accounts create --email E [--balance USD] [--tier T] [--monthly-budget USD] [--monthly-token-budget N] [--admin] [--clamping on|off]
  admin accounts list
  admin accounts set-status ID active|suspended|closed
  admin accounts set-clamping ID on|off
  admin accounts set-limits ID JSON|none  rate and concurrency limits, e.g. '{"requests_per_minute":60}'
  admin accounts credit ID USD | debit ID USD
  admin users create --email E [--admin] [--tier T]   a person who signs in: an account without a password and
                                          its set-password link (printed once; works once, until it expires)
  admin users reset-password (--email E | ID)   a new set-password link (administrators too: for a locked-out one)
  admin keys create --account ID [--name N] [--budget-cap USD] [--token-cap N] [--clamping on|off] [POLICY]
  admin keys set-clamping KEY_ID on|off
  admin keys set-policy KEY_ID POLICY     POLICY: [--models M,M|none] [--networks CIDR,CIDR|none] [--expires ISO|none]
                                          [--period day|week|month|none] [--period-budget USD|none] [--period-token-cap N|none]
                                          [--guardrails NAME,NAME|none]
  admin keys create --account ID [--name N] [--budget-cap USD] [--token-cap N] [--clamping on|off] [--limits JSON]
  admin keys set-clamping KEY_ID on|off
  admin keys set-limits KEY_ID JSON|none
  admin keys list --account ID
  admin keys revoke KEY_ID
  admin provider-keys add --account ID --provider P --key K|- [--label L]
  admin provider-keys list --account ID
  admin provider-keys remove ID
  admin provider-keys test ID                a shared catalog key (pk_…): one smallest request, paid by the operator
  admin ledger prune --older-than-days N
  admin ledger verify [--account ID]      walks the ledger's hash chains and recomputes balances, spend and usage
                                          from it; exit 1 names the first broken link and each figure that differs
  admin upstreams status                  every upstream key's circuit breaker, error rate and latency
  admin codes mint --value USD [--count N] [--expires-in-days N] [--batch B] [--note TEXT]   redemption codes (shown once)
  admin codes list [--batch B] [--state unused|used|revoked|expired]
  admin codes revoke ID
  admin stripe events [--status S]        Stripe events acted on (card top-ups); --status pending: waiting for you
  admin stripe confirm|dismiss EVENT_ID   a pending refund or dispute debit: take what the balance holds, or nothing
  admin alerts list [--workspace ID] | remove ID | test ID | deliveries ID [--limit N]   alert subscriptions
  admin alerts add URL --events TYPE,... [--format json|slack] [--workspace ID] [--description T]   (secret shown once)
  admin token create --name N --scope S [--scope S ...]   an admin API token (shown once); scopes in docs/operations.md
  admin token list
  admin token revoke ID
  admin catalog providers|models|tiers|routing-groups|mcp-servers list | show NAME
  admin catalog KIND add NAME JSON|- | set NAME JSON|- [--base V]   add an entry, or change its fields (null removes
                                          one); each change is one catalog version (catalog.source: database)
  admin catalog providers|models|mcp-servers disable NAME | enable NAME [--base V];  admin catalog KIND remove NAME [--base V]
  config check FILE                       validate a config file without serving: every error with its field path
  config export [--output FILE]           the catalog served (providers, models, tiers) as a config file, keys left out
  admin config reload [--url URL]         the running gateway re-reads its config file (like SIGHUP); needs
                                          GATEWAY_ADMIN_TOKEN (scope config:write); URL: GATEWAY_URL or HOST:PORT
Every command accepts --json. Environment: DATABASE_URL, GATEWAY_CONFIG, GATEWAY_SECRET, GATEWAY_LEDGER_SECRET, PORT, HOST, GATEWAY_URL, GATEWAY_ADMIN_TOKEN.`;

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const [command, ...rest] = argv;
    if (!command) throw new UsageError("no command given; run gateway help");
    if (command === "help" || command === "--help" || command === "-h") {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    if (command === "--version" || command === "version") {
      io.stdout(`${packageVersion()}\n`);
      return 0;
    }
    // Checking a file must not need the default config to be valid; export loads its own.
    if (command === "config") return await (await import("./commands/config-file.js")).configFileCommand(rest[0], rest.slice(1), io);
    // The running gateway reads its own file: a reload needs neither a valid local config nor the database.
    if (command === "admin" && rest[0] === "config") return await (await import("./commands/config.js")).configCommand(rest[1], rest.slice(2), io);
    const config = (await import("../config/load.js")).loadConfig(io.env, io.cwd);
    switch (command) {
      case "serve": {
        const { values } = parseCommand(rest, { workers: { type: "string" } }, []);
        await (await import("./serve.js")).serve(config, io, parseWorkers(values.workers, config.databaseUrl === null));
        return 0;
      }
      case "migrate": {
        const { json } = parseCommand(rest, {}, []);
        const [{ openDatabase }, { migrate }] = await Promise.all([import("../store/database.js"), import("../store/migrate.js")]);
        const handle = await openDatabase({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath });
        try {
          const { applied } = await migrate(handle);
          emit(io, json, { database: handle.description, applied }, () => `${handle.description}: ${applied.length ? `applied ${applied.join(", ")}` : "up to date"}`);
        } finally {
          await handle.close();
        }
        return 0;
      }
      case "admin":
        return await withStore(config, (store) => admin(rest, io, store, config));
      default:
        throw new UsageError(`unknown command "${command}"; run gateway help`);
    }
  } catch (error) {
    return reportFailure(error, io);
  }
}

/** The package's version, from package.json next to dist/ (and src/). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** Bounded: a typo like 1000 must not fork a thousand processes. */
const MAX_WORKERS = 256;

/**
 * The default worker count: on SQLite the count that measured fastest (2 on a quiet 16-core
 * machine: 1, 2, 4, 8 workers gave 3,615, 5,146, 4,568 and 3,633 req/s, every worker contending for
 * SQLite's one writer; the primary as the one billing writer, decision 0047, measured worse on 2
 * cores and is opt-in); on PostgreSQL one per core (the billing of different accounts runs in
 * parallel there). docs/operations.md, "How many workers".
 */
export function defaultWorkers(sqlite: boolean, cores = availableParallelism()): number {
  return sqlite ? Math.min(SQLITE_DEFAULT_WORKERS, cores) : cores;
}

const SQLITE_DEFAULT_WORKERS = 2;

function parseWorkers(value: string | boolean | undefined, sqlite: boolean): number {
  if (value === undefined) return defaultWorkers(sqlite);
  const workers = typeof value === "string" && /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(workers >= 1 && workers <= MAX_WORKERS)) throw new UsageError(`--workers must be a whole number from 1 to ${MAX_WORKERS}`);
  return workers;
}

async function admin(args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<number> {
  const [group, sub, ...rest] = args;
  switch (group) {
    case "accounts":
      await (await import("./commands/accounts.js")).accountsCommand(sub, rest, io, store, config);
      break;
    case "users":
      await (await import("./commands/users.js")).usersCommand(sub, rest, io, store, config);
      break;
    case "keys":
      await (await import("./commands/keys.js")).keysCommand(sub, rest, io, store, config);
      break;
    case "provider-keys":
      return (await (await import("./commands/provider-keys.js")).providerKeysCommand(sub, rest, io, store, config)) ?? 0;
    case "ledger":
      return (await import("./commands/ledger.js")).ledgerCommand(sub, rest, io, store);
    case "upstreams":
      await (await import("./commands/upstreams.js")).upstreamsCommand(sub, rest, io, store, config);
      break;
    case "token":
      await (await import("./commands/admin-tokens.js")).adminTokensCommand(sub, rest, io, store);
      break;
    case "codes":
      await (await import("./commands/codes.js")).codesCommand(sub, rest, io, store);
      break;
    case "stripe":
      await (await import("./commands/stripe.js")).stripeCommand(sub, rest, io, store);
      break;
    case "catalog":
      await (await import("./commands/catalog.js")).catalogCommand(sub === undefined ? [] : [sub, ...rest], io, store, config);
      break;
    case "tag-budgets":
      await (await import("./commands/tag-budgets.js")).tagBudgetsCommand(sub, rest, io, store);
      break;
    case "alerts":
      await (await import("./commands/alerts.js")).alertsCommand(sub, rest, io, store, config);
      break;
    default:
      throw new UsageError("usage: gateway admin accounts|users|keys|provider-keys|ledger|upstreams|token|codes|stripe|catalog|tag-budgets|alerts|config ...");
  }
  return 0;
}

async function withStore<T>(config: GatewayConfig, work: (store: Store) => Promise<T>): Promise<T> {
  const [{ openStore }, { resolveServerSecret }] = await Promise.all([import("../store/index.js"), import("../config/server-secret.js")]);
  const store = await openStore({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath, secret: resolveServerSecret(config), ledgerSecret: config.ledgerSecret });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function reportFailure(error: unknown, io: CliIo): number {
  if (error instanceof UsageError) {
    io.stderr(`gateway: ${error.message}\n`);
    return 2;
  }
  if (error instanceof GatewayError) {
    io.stderr(`gateway: ${error.type}: ${error.message}\n`);
    return 1;
  }
  // By name: the config loader is not loaded for --help.
  if (error instanceof Error && error.name === "ConfigError") {
    io.stderr(`gateway: config: ${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(`gateway: ${message.split("\n")[0]}\n`);
  return 1;
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/** The process's own arguments and streams: what the `gateway` executable runs (src/cli/bin.ts). */
export function runFromCommandLine(): void {
  const io: CliIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
  };
  // runCli reports every failure itself and resolves to the exit code.
  void runCli(process.argv.slice(2), io).then((code) => {
    process.exitCode = code;
    // A cluster worker (`serve --workers N`), drained or failed at start (a config it cannot load,
    // a port it cannot take): leaving the cluster ends the IPC channel that would keep it alive,
    // and tells the primary it left on purpose.
    if (cluster.worker?.isConnected()) cluster.worker.disconnect();
  });
}

// Run from source (tsx src/cli/main.ts); the built executable is src/cli/bin.ts.
if (isEntryPoint()) runFromCommandLine();
