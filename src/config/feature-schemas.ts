// The config file's sections of the features added after the core (the MCP gateway, card top-ups,
// the response cache, alerts and the scheduled ledger verify): schema.ts composes them into the file.
import { z } from "zod";

/** At most this many MCP servers: every session lists all of them. */
export const MAX_MCP_SERVERS = 50;

/** A header an MCP server is sent, by name. */
export const mcpHeaderName = z.string().min(1).max(256);
/** An environment variable a stdio MCP server is given, by name. */
export const mcpEnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name");
/** The longest header or environment value. */
export const MAX_MCP_VALUE_LENGTH = 8192;

/** One MCP server: `url` (remote, streamable HTTP) or `command` (stdio), never both (mcp-settings.ts). */
export const mcpServerSchema = z.strictObject({
  /** The prefix of its tools' and prompts' names (`<name>__<tool>`): lower-case letters and digits, single - or _ between. */
  name: z
    .string()
    .max(64)
    .regex(/^[a-z0-9]+(?:[-_][a-z0-9]+)*$/, "lower-case letters and digits, with single - or _ between them"),
  url: z.url().max(2048).optional(),
  /** Sent to a remote server with every request (its credentials: write them as ${AN_ENVIRONMENT_VARIABLE}). */
  headers: z.record(mcpHeaderName, z.string().max(MAX_MCP_VALUE_LENGTH)).optional(),
  command: z.string().min(1).max(1024).optional(),
  args: z.array(z.string().max(4096)).max(100).optional(),
  /** Added to the few variables a stdio server inherits (PATH, HOME…: never the gateway's secrets). */
  env: z.record(mcpEnvName, z.string().max(MAX_MCP_VALUE_LENGTH)).optional(),
  /** Charged per tools/call that succeeds (a USD decimal string); absent: calls are free. */
  price_per_call_usd: z.string().max(20).optional(),
  /** Connecting (and the first listing) may take this long before the server counts as down. */
  connect_timeout_ms: z.number().int().min(100).max(300_000).default(15_000),
  /** One call (tools/call, prompts/get, resources/read, a listing) may take this long. */
  call_timeout_ms: z.number().int().min(100).max(3_600_000).default(60_000),
  /** false: defined and checked, but not started or listed. */
  disabled: z.boolean().optional(),
});

/**
 * The MCP gateway at /mcp (docs/configuration.md, "MCP servers"): the operator's MCP servers, remote
 * (streamable HTTP) or local (stdio commands the gateway starts and supervises). Checked in mcp-settings.ts.
 */
export const mcpSectionSchema = z
  .strictObject({
    /** Sessions one gateway key may hold at once; opening one more closes its least recently used. */
    max_sessions_per_key: z.number().int().min(1).max(1_000).default(16),
    /** A session unused this long is closed. */
    session_idle_s: z.number().int().min(10).max(86_400).default(1_800),
    servers: z.array(mcpServerSchema).max(MAX_MCP_SERVERS).default([]),
    /**
     * Whether the live catalog (admin API, CLI, console) may add stdio servers: a command the gateway
     * runs, so off by default; without it only remote URL servers can be added there.
     */
    allow_catalog_stdio: z.boolean().default(false),
  })
  .prefault({});

/**
 * Card top-ups with Stripe Checkout (docs/configuration.md, "Card top-ups"); off without this
 * section. Each secret inline (as ${AN_ENVIRONMENT_VARIABLE}) or in a file; checked in stripe-settings.ts.
 */
export const stripeSectionSchema = z
  .strictObject({
    secret_key: z.string().min(1).max(512).optional(),
    secret_key_file: z.string().min(1).max(4096).optional(),
    webhook_secret: z.string().min(1).max(512).optional(),
    webhook_secret_file: z.string().min(1).max(4096).optional(),
    currency: z.literal("usd").default("usd"),
    min_topup_usd: z.string().max(20).default("5.00"),
    max_topup_usd: z.string().max(20).default("1000.00"),
    success_url: z.url().max(2048).optional(),
    cancel_url: z.url().max(2048).optional(),
    /** Seconds a signed webhook stays acceptable after its timestamp. */
    tolerance_s: z.number().int().min(1).max(3600).default(300),
    /** The Stripe API's scheme, host and port; for tests against a local mock. */
    api_base: z.url().max(2048).optional(),
    timeout_ms: z.number().int().min(1_000).max(120_000).default(20_000),
  })
  .optional();

/**
 * The exact response cache (docs/configuration.md, "Response cache"; ADR 0044): opt-in per key or
 * workspace; this section bounds it and prices its hits. Redis when REDIS_URL is set, else memory.
 */
export const cacheSectionSchema = z
  .strictObject({
    /** The largest answer stored (bytes of its stored form); larger ones are served and not stored. */
    max_entry_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /** The in-process backend's bound on all entries (bytes); the least recently used leave first. */
    max_total_bytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(16 * 1024 * 1024 * 1024)
      .default(64 * 1024 * 1024),
    /** The TTL of a setting that names none, and the bounds a setting's TTL must stay within. */
    default_ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .default(3_600),
    min_ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .default(1),
    max_ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .default(7 * 86_400),
    /** What a hit costs: "free", or a fraction of the original cost with at most 4 decimals ("0.1"). */
    hit_price: z.union([z.literal("free"), z.string().regex(/^(0(\.[0-9]{1,4})?|1(\.0{1,4})?)$/, "free, or a fraction from 0 to 1 with at most 4 decimals")]).default("free"),
    /** Settings may choose scope `gateway` (answers shared across accounts) only when this is true. */
    allow_gateway_scope: z.boolean().default(false),
    /** Redis keys start with this (several gateways, or tests, on one Redis). */
    key_prefix: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9:_.-]+$/)
      .default("mgw:cache:"),
    /** A Redis command slower than this counts as an error and the request is a miss. */
    redis_timeout_ms: z.number().int().min(10).max(10_000).default(250),
  })
  .prefault({});

/** Alerts by webhook and spend reports (docs/operations.md, "Alerts"; ADR 0040). */
export const alertsSectionSchema = z
  .strictObject({
    /** Hosts an http:// endpoint may name (https:// may name any host); e.g. a receiver on the same network. */
    allowed_http_hosts: z.array(z.string().min(1).max(253)).max(100).default([]),
    attempt_timeout_ms: z.number().int().min(50).max(60_000).default(5_000),
    max_attempts: z.number().int().min(1).max(20).default(8),
    /** The wait before the first retry; each next one doubles, at most 6 hours. */
    backoff_ms: z.number().int().min(10).max(3_600_000).default(30_000),
    poll_ms: z.number().int().min(20).max(60_000).default(1_000),
    /** Daily and weekly spend reports as report.daily / report.weekly events. */
    reports: z.boolean().default(true),
  })
  .prefault({});

/** `ledger verify` on a schedule, in one process at a time (docs/operations.md, "Scheduled ledger verify"); 0: off. */
export const ledgerVerifySectionSchema = z.strictObject({ interval_s: z.number().int().min(0).max(31_536_000).default(86_400) }).prefault({});
