// The config file's shape. Prices are USD decimal strings (or plain numbers) and become exact
// nano-USD integers in build-catalog.ts; nothing downstream sees a float.
import { z } from "zod";
import { guardrailsSectionSchema } from "./guardrail-schema.js";
import { alertsSectionSchema, cacheSectionSchema, ledgerVerifySectionSchema, mcpSectionSchema, stripeSectionSchema } from "./feature-schemas.js";
import { tierLimitsSchema } from "../core/traffic-limits.js";
import { DIMENSIONS, TOKEN_DIMENSIONS, type Dimension } from "../core/dimensions.js";
import { MAX_USAGE_COUNT } from "../core/usage.js";
import { UPSTREAM_TYPES } from "../upstreams/capabilities.js";
import { PASSWORD_LINK_TTL_HOURS } from "../store/password-links-store.js";

const usd = z.union([z.string(), z.number()]);
export const identifier = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, "letters, digits and . _ : / @ - only");

export const providerSchema = z.strictObject({
  /** A registered upstream type (src/upstreams/capabilities.ts): openai, anthropic, google-operations. */
  type: z.enum(UPSTREAM_TYPES),
  base_url: z.url(),
  /** A disabled provider stays defined (and checked) but none of its deployments is routed to (build-catalog.ts). */
  disabled: z.boolean().optional(),
  /** Shared upstream keys, used for accounts that have none of their own for this provider. */
  keys: z.array(z.string().min(1)).default([]),
  /** Which OpenAI APIs an openai-type upstream speaks natively; others are bridged over chat. Default: the type's (build-catalog.ts). */
  apis: z.array(z.enum(["chat", "responses", "images", "videos"])).optional(),
  /** The `api-version` query parameter, for the types that take one (azure-openai; default there: its documented one). */
  api_version: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, "letters, digits and . _ - only (for example 2025-04-01-preview)")
    .optional(),
  /** The AWS region a bedrock provider signs for (SigV4); default: the region in a bedrock-runtime.<region>.amazonaws.com base_url. */
  region: z
    .string()
    .regex(/^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/, "an AWS region such as us-east-1")
    .optional(),
  /** Extra headers sent upstream (for example an API version). */
  headers: z.record(z.string(), z.string()).default({}),
  timeout_ms: z.number().int().positive().default(600_000),
  connect_timeout_ms: z.number().int().positive().default(10_000),
  /** HTTP/1.1 connections per upstream origin (HTTP/2: streams share fewer); requests beyond wait (docs/configuration.md). */
  max_connections: z.number().int().min(1).max(65_536).default(1_024),
  /** The longest a request waits for a free upstream connection before it fails with provider_error. */
  connection_wait_ms: z.number().int().min(100).max(600_000).default(30_000),
  /** Offer HTTP/2 on TLS upstream connections (ALPN; the upstream picks). */
  http2: z.boolean().default(true),
});

/** One optional USD price per dimension of src/core/dimensions.ts that has a price key. */
function priceKeys<K extends string>(keys: readonly K[]) {
  return Object.fromEntries(keys.map((key) => [key, usd.optional()])) as { [P in K]: z.ZodOptional<typeof usd> };
}

const dimensionPriceKeys = DIMENSIONS.flatMap((d): Array<Extract<Dimension["priceKey"], string>> => (d.priceKey === null ? [] : [d.priceKey]));
const tokenPriceKeys = TOKEN_DIMENSIONS.map((d) => d.priceKey);

/** Token prices for requests whose input (cached reads and cache writes included) is above a threshold. */
const longContextSchema = z.strictObject({
  above_input_tokens: z.number().int().positive().max(MAX_USAGE_COUNT),
  ...priceKeys(tokenPriceKeys),
});

const pricingSchema = z.strictObject({
  ...priceKeys(dimensionPriceKeys),
  /** Per image, keyed by "SIZE" or "SIZE/QUALITY" (for example "1024x1024/hd"); "default" as fallback. */
  per_image: z.record(z.string(), usd).optional(),
  long_context: longContextSchema.optional(),
});

const modality = z.enum(["text", "image", "audio", "video", "embedding"]);

/** One way to serve a routing group's model: a provider, its model name, optionally its own price and window. */
export const deploymentSchema = z.strictObject({
  /** The public name: the x-gateway-deployment header and the ledger's deployment column (never a host or key). */
  name: identifier,
  provider: z.string().min(1),
  upstream_model: z.string().min(1).optional(),
  context_window: z.number().int().positive().optional(),
  /** Replaces the model's pricing for requests this deployment serves. */
  pricing: pricingSchema.optional(),
  /** Share of traffic under strategy: weighted, among the healthy deployments of the best priority. */
  weight: z.number().int().positive().max(1_000_000).optional(),
  /** Lower runs first: a deployment is only used while every one of a lower priority is failing or open. */
  priority: z.number().int().min(0).max(1_000).default(0),
  /**
   * Active health probe (docs/configuration.md, "Health probes"): the key test's smallest request to
   * this deployment every interval_s; a failing one takes the deployment out of routing until one passes.
   */
  health_check: z
    .strictObject({
      interval_s: z.number().int().min(10).max(86_400),
      timeout_ms: z.number().int().min(1_000).max(60_000).default(10_000),
    })
    .optional(),
});

export const routingSchema = z.strictObject({
  strategy: z.enum(["ordered", "weighted"]).default("ordered"),
  /** On a context-length error, try a deployment with a larger context_window. */
  context_fallback: z.boolean().default(false),
});

export const modelSchema = z.strictObject({
  id: identifier,
  kind: z.enum(["chat", "image", "video", "embedding"]),
  /** A disabled model stays defined (and checked) but is not served: not listed, refused like an unknown model. */
  disabled: z.boolean().optional(),
  /** The single-provider form; a routing group lists deployments instead (build-catalog.ts checks one of the two). */
  provider: z.string().min(1).optional(),
  upstream_model: z.string().min(1).optional(),
  context_window: z.number().int().positive().optional(),
  /** Requests asking for more output are refused; without it, MAX_OUTPUT_TOKENS_CEILING applies. */
  max_output_tokens: z.number().int().positive().max(MAX_USAGE_COUNT).optional(),
  /** Output tokens assumed at admission when the request sets no max_tokens. */
  default_output_tokens: z.number().int().positive().max(MAX_USAGE_COUNT).optional(),
  modalities: z.strictObject({ input: z.array(modality).min(1), output: z.array(modality).min(1) }).optional(),
  /**
   * Prompt-cache breakpoints on bridged requests (docs/configuration.md): auto places them for an
   * Anthropic upstream when the client sent none; off places none; forward also passes a client's
   * cache_control on to a Chat upstream that bridges to Anthropic itself. Default auto.
   */
  prompt_caching: z.enum(["auto", "off", "forward"]).optional(),
  pricing: pricingSchema.default({}),
  /** A routing group (chat models): at most 16 deployments, tried by `routing`. */
  deployments: z.array(deploymentSchema).min(1).max(16).optional(),
  routing: routingSchema.optional(),
});

export const tierSchema = z.strictObject({
  /** Model ids this tier includes; "*" includes every model. */
  models: z.array(z.string().min(1)).min(1),
  /** Rate and concurrency limits for every key and account of the tier (src/core/traffic-limits.ts); model ids checked in build-catalog.ts. */
  limits: tierLimitsSchema.optional(),
  /**
   * The tier pays the list price times this factor (src/core/price-factor.ts): a decimal string with
   * at most 6 decimals, above 0 and at most 1000 ("1.5", "0.8"); checked in build-catalog.ts. Absent: 1.
   */
  price_factor: z.string().max(20).optional(),
});

export const configFileSchema = z.strictObject({
  server: z
    .strictObject({
      body_limit_mb: z.number().positive().max(1024).default(16),
      /**
       * Who may create an account on the sign-in page: anyone (open), only with a workspace invite
       * (invite; invite_only is its earlier name), or nobody: administrators create people (closed).
       * Default: open when the file configures no providers (the demo first run), else closed (build-catalog.ts).
       */
      signup: z.enum(["open", "invite", "closed", "invite_only"]).optional(),
      /** How long a set-password link (an administrator's invitation or reset) works. */
      password_link_ttl_hours: z.number().int().min(PASSWORD_LINK_TTL_HOURS.min).max(PASSWORD_LINK_TTL_HOURS.max).default(PASSWORD_LINK_TTL_HOURS.default),
      /** Default tier for accounts created without one. */
      default_tier: z.string().min(1).optional(),
      /** Peers (IPs or CIDR ranges) whose X-Forwarded-* headers are believed; none when absent. Checked in load.ts. */
      trusted_proxies: z.array(z.string()).optional(),
      /** A client must send its request headers within this time of starting the request. */
      headers_timeout_ms: z.number().int().positive().default(15_000),
      /** ... and the whole request, body included (the response, however long, is not limited). */
      request_timeout_ms: z.number().int().positive().default(120_000),
      /** An idle kept-alive connection is closed after this time. */
      keep_alive_timeout_ms: z.number().int().positive().default(65_000),
      /** Connections beyond this many open at once are closed as they arrive. */
      max_connections: z.number().int().positive().default(4096),
      /**
       * The gateway's address as clients reach it (behind a proxy or a TLS terminator), for the dashboard's
       * getting-started snippets; absent: the address the browser shows. Checked in load.ts.
       */
      public_url: z.string().max(2048).optional(),
    })
    .prefault({}),
  /** Video tasks and image answers; every field optional (defaults in src/config/media-settings.ts). */
  media: z
    .strictObject({
      video_poll_interval_ms: z.number().int().min(100).optional(),
      video_task_ttl_hours: z
        .number()
        .positive()
        .max(24 * 30)
        .optional(),
      default_video_seconds: z.number().int().min(1).max(600).optional(),
      video_refresh_interval_ms: z.number().int().min(0).optional(),
      max_image_response_mb: z.number().positive().max(4096).optional(),
    })
    .default({}),
  /** Admission (docs/billing.md): how a request its limits cannot fully cover is served. */
  billing: z
    .strictObject({
      clamp: z
        .strictObject({
          /**
           * A request whose limits cover its prompt and at least this many output tokens is admitted with
           * its output limit lowered to what they cover; below it, 402. At most the global output ceiling.
           */
          min_output_tokens: z.number().int().min(1).max(1_000_000).default(256),
        })
        .prefault({}),
      /** An answer a response-side guardrail blocked: charged what the upstream reported (true) or nothing. */
      charge_blocked_answers: z.boolean().default(true),
    })
    .prefault({}),
  /** Guardrails on every model request's text and answer (docs/configuration.md, "Guardrails"). */
  guardrails: guardrailsSectionSchema,
  /**
   * The request log (docs/dashboard.md, "Requests"): every gateway request, answered or refused,
   * written behind the request path and kept retention_days, apart from the ledger.
   */
  request_log: z
    .strictObject({
      enabled: z.boolean().default(true),
      retention_days: z.number().int().min(1).max(3650).default(30),
      /** Entries waiting to be written at most; beyond it they are dropped and counted. */
      max_buffered: z.number().int().min(100).max(1_000_000).default(20_000),
      flush_interval_ms: z.number().int().min(10).max(60_000).default(500),
    })
    .prefault({}),
  cache: cacheSectionSchema,
  alerts: alertsSectionSchema,
  ledger_verify: ledgerVerifySectionSchema,
  /** Circuit breakers per upstream key (docs/configuration.md); the defaults suit most providers. */
  upstream_health: z
    .strictObject({
      /** Outcomes older than this leave the sliding window. */
      window_ms: z.number().int().min(1_000).default(30_000),
      /** A breaker never opens on fewer requests in the window than this. */
      min_requests: z.number().int().min(1).default(10),
      /** The share of failed requests in the window (0 < x <= 1) that opens the breaker. */
      failure_threshold: z.number().gt(0).max(1).default(0.5),
      /** An open breaker refuses requests this long, then lets trial requests through. */
      open_ms: z.number().int().min(100).default(30_000),
      /** Trial requests let through at once while half-open (per process). */
      half_open_trials: z.number().int().min(1).max(100).default(1),
    })
    .prefault({}),
  /**
   * The built-in demo provider and its models (demo-chat, demo-fast). Default: on when the file
   * defines no providers (and without a config file), off as soon as it defines one (config-file.ts).
   */
  demo: z.boolean().optional(),
  /**
   * Prometheus metrics at GET /metrics (docs/operations.md#metrics): served on the main listener to
   * requests with the bearer token in the environment variable `token_env`, and/or on a separate
   * `listen` address (host:port). Neither set: no /metrics and nothing recorded.
   */
  metrics: z
    .strictObject({
      token_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
        .optional(),
      listen: z.string().optional(),
      /** Series per account (opt-in): at most max_accounts accounts get their own, the rest share one. */
      account_series: z
        .strictObject({
          enabled: z.boolean().default(false),
          max_accounts: z.number().int().min(1).max(10_000).default(100),
        })
        .prefault({}),
    })
    .optional(),
  /**
   * Where the catalog (demo, providers, models, tiers) lives (docs/configuration.md, "The live
   * catalog"): `file`, this file, read-only in the console; `database`, numbered versions in the
   * database that the admin API and the console change, seeded once from this file. Default: file
   * when there is a config file, database without one (load.ts).
   */
  /**
   * Company sign-in to the dashboard with OpenID Connect (docs/dashboard.md, "Company sign-in"):
   * the authorization code flow with PKCE against `issuer` (discovered). Checked in oidc-settings.ts.
   */
  oidc: z
    .strictObject({
      issuer: z.url().max(2048),
      client_id: z.string().min(1).max(256),
      /** Absent: a public client (PKCE only). Write it as ${AN_ENVIRONMENT_VARIABLE}. */
      client_secret: z.string().min(1).max(1024).optional(),
      /** The sign-in button's words: "Sign in with <label>". */
      label: z.string().min(1).max(60).default("company sign-in"),
      /** Space-separated scopes; openid and email are always asked for. */
      scopes: z.string().max(500).default("openid email profile"),
      /** Only people whose verified email is at one of these domains may sign in; absent: every domain. */
      allowed_email_domains: z.array(z.string().min(1).max(253)).min(1).max(100).optional(),
      /** A claim that makes the person an administrator: its value, or an array holding it; checked at every sign-in. */
      admin: z.strictObject({ claim: z.string().min(1).max(100), value: z.string().min(1).max(200) }).optional(),
      /** A claim listing groups, each group mapped to a workspace (its id) and a role; memberships follow it at every sign-in. */
      workspaces: z
        .strictObject({
          claim: z.string().min(1).max(100).default("groups"),
          map: z.record(z.string().min(1).max(200), z.strictObject({ workspace: z.string().min(1).max(64), role: z.enum(["admin", "member"]).default("member") })),
        })
        .optional(),
      /** false: the dashboard refuses password sign-in and sign-up (the CLI still works). */
      password_sign_in: z.boolean().default(true),
    })
    .optional(),
  stripe: stripeSectionSchema,
  mcp: mcpSectionSchema,
  catalog: z.strictObject({ source: z.enum(["file", "database"]).optional() }).prefault({}),
  providers: z.record(identifier, providerSchema).default({}),
  models: z.array(modelSchema).default([]),
  tiers: z.record(identifier, tierSchema).default({}),
});

export type ConfigFile = z.infer<typeof configFileSchema>;
export type ProviderFileEntry = z.infer<typeof providerSchema>;
export type ModelFileEntry = z.infer<typeof modelSchema>;
export type DeploymentFileEntry = z.infer<typeof deploymentSchema>;
