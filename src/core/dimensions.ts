// The billable dimensions, declared once. Everything that prices, stores or reports usage is derived
// from this list: the config's price keys (config/schema.ts, load.ts), the model's prices
// (core/catalog.ts), the Usage counts (core/usage.ts), the pricing function (pricing.ts), the ledger
// columns (store/tables.ts; a migration adds the columns of a new entry), the settlement parameters on
// SQLite and PostgreSQL (settlement-*.ts, gw-batch-function.ts), /v1/usage and /v1/me, the dashboard's
// usage views and its CSV export. Adding a dimension is one entry here plus one migration that adds its
// ledger columns; test/billing/dimensions.test.ts fails when a place does not follow.
//
// The dimensions are disjoint: each token, call or unit is billed in exactly one of them, and a usage
// row's cost_nano is exactly the sum of its dimensions' cost columns (pricing.ts allocates the one
// rounding of the token part). This module imports nothing, so that every layer can read it.

/** How a dimension is counted and priced. */
export type DimensionUnit =
  /** Tokens, priced per million (nano-USD per Mtok); part of the one ceiling division of pricing.ts. */
  | "token"
  /** Whole units priced in nano-USD each: tool calls, requests, images, seconds of video. */
  | "unit";

export interface DimensionSpec {
  /** The name in the API, the dashboard and the CSV (`<name>_cost_usd`). */
  readonly name: string;
  readonly unit: DimensionUnit;
  /** What one counted item is, for people: "tokens", "calls", "requests", "images", "seconds". */
  readonly counts: string;
  /**
   * The config key of the price (under `pricing:`, and under `long_context:` for a tiered one);
   * null for images, priced from the `per_image` table.
   */
  readonly priceKey: string | null;
  /** The price key whose price applies when priceKey is not configured; null: 0. */
  readonly priceDefault: string | null;
  /** The field of ModelPricing holding that price (nano-USD, per million tokens for "token"). */
  readonly priceField: string | null;
  /**
   * The Usage field holding the count; null when derived: "input" is the input not read from or
   * written to the cache, "request" is 1 for every settled request.
   */
  readonly usageField: string | null;
  /** The ledger column storing the count; null when derived from other columns. */
  readonly countColumn: string | null;
  /** The ledger column storing this dimension's share of cost_nano. */
  readonly costColumn: string;
  /** A model's long_context tier may price it (token dimensions only). */
  readonly tiered: boolean;
}

export const DIMENSIONS = [
  {
    name: "input",
    unit: "token",
    counts: "tokens",
    priceKey: "input_per_mtok",
    priceDefault: null,
    priceField: "inputPerMtok",
    usageField: null,
    countColumn: null,
    costColumn: "input_cost_nano",
    tiered: true,
  },
  {
    name: "cached_input",
    unit: "token",
    counts: "tokens",
    priceKey: "cached_input_per_mtok",
    priceDefault: "input_per_mtok",
    priceField: "cachedInputPerMtok",
    usageField: "cachedInputTokens",
    countColumn: "cached_tokens",
    costColumn: "cached_input_cost_nano",
    tiered: true,
  },
  {
    name: "cache_write_5m",
    unit: "token",
    counts: "tokens",
    priceKey: "cache_write_5m_per_mtok",
    priceDefault: "input_per_mtok",
    priceField: "cacheWrite5mPerMtok",
    usageField: "cacheWrite5mTokens",
    countColumn: "cache_write_5m_tokens",
    costColumn: "cache_write_5m_cost_nano",
    tiered: true,
  },
  {
    name: "cache_write_1h",
    unit: "token",
    counts: "tokens",
    priceKey: "cache_write_1h_per_mtok",
    priceDefault: "cache_write_5m_per_mtok",
    priceField: "cacheWrite1hPerMtok",
    usageField: "cacheWrite1hTokens",
    countColumn: "cache_write_1h_tokens",
    costColumn: "cache_write_1h_cost_nano",
    tiered: true,
  },
  {
    name: "output",
    unit: "token",
    counts: "tokens",
    priceKey: "output_per_mtok",
    priceDefault: null,
    priceField: "outputPerMtok",
    usageField: "outputTokens",
    countColumn: "output_tokens",
    costColumn: "output_cost_nano",
    tiered: true,
  },
  {
    name: "web_search",
    unit: "unit",
    counts: "calls",
    priceKey: "web_search_per_call",
    priceDefault: null,
    priceField: "webSearchPerCall",
    usageField: "webSearchCalls",
    countColumn: "web_search_calls",
    costColumn: "web_search_cost_nano",
    tiered: false,
  },
  {
    name: "request",
    unit: "unit",
    counts: "requests",
    priceKey: "per_request",
    priceDefault: null,
    priceField: "perRequest",
    usageField: null,
    countColumn: null,
    costColumn: "request_cost_nano",
    tiered: false,
  },
  {
    name: "image",
    unit: "unit",
    counts: "images",
    priceKey: null,
    priceDefault: null,
    priceField: null,
    usageField: "images",
    countColumn: "images",
    costColumn: "image_cost_nano",
    tiered: false,
  },
  {
    name: "video_second",
    unit: "unit",
    counts: "seconds",
    priceKey: "per_video_second",
    priceDefault: null,
    priceField: "perVideoSecond",
    usageField: "videoSeconds",
    countColumn: "video_seconds",
    costColumn: "video_cost_nano",
    tiered: false,
  },
] as const satisfies readonly DimensionSpec[];

export type Dimension = (typeof DIMENSIONS)[number];
export type DimensionName = Dimension["name"];

/** The Usage fields the dimensions count (the fields of Usage beyond these are not billed on their own). */
export type DimensionUsageField = Extract<Dimension["usageField"], string>;
/** The ModelPricing fields of the dimensions' prices. */
export type DimensionPriceField = Extract<Dimension["priceField"], string>;
/** The ModelPricing fields of the token dimensions' prices, the ones a long_context tier may set. */
export type TokenPriceField = Extract<Extract<Dimension, { unit: "token" }>["priceField"], string>;
/** The config keys of the token prices. */
export type TokenPriceKey = Extract<Extract<Dimension, { unit: "token" }>["priceKey"], string>;
export type DimensionCountColumn = Extract<Dimension["countColumn"], string>;
export type DimensionCostColumn = Dimension["costColumn"];

export const TOKEN_DIMENSIONS = DIMENSIONS.filter((d): d is Extract<Dimension, { unit: "token" }> => d.unit === "token");

/**
 * The ledger's signed column of what caching saved on the row: the cached reads at the input price
 * minus what they cost, minus the cache writes' premium over the input price (pricing.ts).
 */
export const CACHE_SAVING_COLUMN = "cache_saving_nano";

/** Count columns the ledger had before the dimension list (migration 0001); settlement writes them by name. */
export const BASE_COUNT_COLUMNS: ReadonlySet<string> = new Set(["input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens"]);

/**
 * The ledger columns settlement writes from the dimension list, in this order on both databases: the
 * count columns added for dimensions (those of 0001 excepted), every cost column, the cache saving.
 */
export const LEDGER_DIMENSION_COLUMNS: readonly string[] = [
  ...DIMENSIONS.flatMap((d) => (d.countColumn !== null && !BASE_COUNT_COLUMNS.has(d.countColumn) ? [d.countColumn] : [])),
  ...DIMENSIONS.map((d) => d.costColumn),
  CACHE_SAVING_COLUMN,
];

/** The dimensions that are cache writes: their premium over the input price counts against the saving. */
export const CACHE_WRITE_DIMENSIONS: readonly DimensionName[] = ["cache_write_5m", "cache_write_1h"];
