// The admin views' response schemas: accounts as administrators see them, upstream keys, the audit
// log, admin API pages, redemption codes and the config reload answer.
import { z } from "zod";
import { usdText, nullableIso, count } from "./response-schema-parts.js";
import { accountViewSchema } from "./response-schemas-common.js";

/** adminAccountView (admin/views.ts). */
export const adminAccountViewSchema = accountViewSchema.extend({
  held_usd: usdText,
  monthly_budget_usd: usdText.nullable(),
  monthly_token_budget: count.nullable(),
  default_model: z.string().nullable(),
  password_set: z.boolean(),
});

/** passwordLinkView (admin/password-links.ts): a set-password link, shown once with its URL. */
export const passwordLinkViewSchema = z.object({
  object: z.literal("password_link"),
  id: z.string(),
  account_id: z.string(),
  purpose: z.enum(["setup", "reset"]),
  url: z.string(),
  expires_at: nullableIso,
});

export const providerKeyViewSchema = z.object({ id: z.string(), account_id: z.string(), provider: z.string(), label: z.string(), last4: z.string(), created_at: nullableIso });

export const auditViewSchema = z.object({
  id: z.string(),
  created_at: nullableIso,
  actor: z.looseObject({ type: z.string() }),
  action: z.string(),
  target: z.object({ type: z.string(), id: z.string().nullable() }),
  before: z.unknown(),
  after: z.unknown(),
  client_address: z.string().nullable(),
  request_id: z.string().nullable(),
});

/** A cursor page of the admin API. */
export function adminPage<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

/** codeView (admin/views.ts): a redemption code as lists show it, never its text. */
export const codeViewSchema = z.object({
  id: z.string(),
  prefix: z.string(),
  value_usd: usdText,
  batch: z.string().nullable(),
  note: z.string().nullable(),
  state: z.enum(["unused", "used", "revoked", "expired"]),
  created_by: z.string().nullable(),
  created_at: nullableIso,
  expires_at: nullableIso,
  used_at: nullableIso,
  used_by: z.string().nullable(),
  revoked_at: nullableIso,
});

/** mintFromBody (admin/routes/codes.ts): the minted codes, each with its text (shown only here). */
export const mintedCodesSchema = z.object({
  object: z.literal("list"),
  data: z.array(codeViewSchema.extend({ code: z.string().describe("The code to hand out; stored only as a hash, never shown again") })),
});

/** POST /admin/v1/config/reload when not refused (src/admin/routes/config.ts, reloadView). */
export const configReloadSchema = z.object({
  object: z.literal("config.reload"),
  status: z.enum(["reloaded", "unchanged"]),
  version: z.string(),
  loaded_at: z.string(),
  previous_version: z.string().optional(),
  changes: z
    .object({
      models_added: z.array(z.string()),
      models_removed: z.array(z.string()),
      models_changed: z.array(z.string()),
      providers_added: z.array(z.string()),
      providers_removed: z.array(z.string()),
      providers_changed: z.array(z.string()),
    })
    .optional(),
});

/** A catalog version's record (/admin/v1/catalog/versions). */
export const catalogVersionSchema = z.object({ version: z.number().int(), created_at: z.string(), actor: z.string().nullable(), reason: z.string() });

/**
 * The catalog document: the config file's demo, providers (without keys), models and tiers sections,
 * and the live catalog's MCP servers (their header and environment values only as {"set": true}).
 */
const catalogDocumentSchema = z.object({
  demo: z.boolean().optional(),
  providers: z.record(z.string(), z.record(z.string(), z.unknown())),
  models: z.array(z.record(z.string(), z.unknown())),
  tiers: z.record(z.string(), z.record(z.string(), z.unknown())),
  mcp_servers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});

/** The answer of "Test" on a provider key (src/admin/provider-key-tests.ts). */
export const providerKeyTestSchema = z.object({
  object: z.literal("provider_key.test"),
  key_id: z.string(),
  provider: z.string(),
  model: z.string(),
  request_id: z.string(),
  ok: z.boolean(),
  status: z.number().int().nullable(),
  latency_ms: z.number().int(),
  cost_nano: z.string(),
  cost_usd: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  refused: z.boolean(),
  disabled: z.boolean(),
  error: z.string().nullable(),
});

export const catalogProviderKeySchema = z.object({
  id: z.string(),
  provider: z.string(),
  label: z.string(),
  last4: z.string(),
  status: z.enum(["active", "disabled"]),
  /** database: added through the console (pk_…); file: written in the config file (fk_…), only enabled or disabled here. */
  source: z.enum(["database", "file"]),
  /** Null for a key of the config file. */
  created_at: z.string().nullable(),
});

export const liveCatalogSchema = z.object({
  object: z.literal("catalog"),
  source: z.enum(["file", "database"]),
  read_only: z.boolean(),
  version: z.number().int().nullable(),
  created_at: z.string().optional(),
  actor: z.string().nullable().optional(),
  reason: z.string().optional(),
  document: catalogDocumentSchema,
  provider_keys: z.array(catalogProviderKeySchema).optional(),
});

const sectionDiffSchema = z.object({
  added: z.record(z.string(), z.unknown()),
  removed: z.record(z.string(), z.unknown()),
  changed: z.record(z.string(), z.object({ before: z.unknown(), after: z.unknown() })),
});

export const catalogDiffSchema = z.object({
  object: z.literal("catalog.diff"),
  from: z.number().int(),
  to: z.number().int().nullable(),
  changes: z.object({
    providers: sectionDiffSchema,
    models: sectionDiffSchema,
    tiers: sectionDiffSchema,
    mcp_servers: sectionDiffSchema,
    demo: z.object({ before: z.boolean().nullable(), after: z.boolean().nullable() }).nullable(),
  }),
});
