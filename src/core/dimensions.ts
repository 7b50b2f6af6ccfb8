// The billable dimensions, declared once. Everything that prices, stores or reports usage is derived
// from this list: the config's price keys (config/schema.ts, load.ts), the model's prices
// (core/catalog.ts), the Usage counts (core/usage.ts), usage normalisation and the pricing and
// admission functions (billing-store.ts, pricing.ts), the ledger columns (store/tables.ts; a migration
// adds the columns of a new entry), the settlement parameters on SQLite and PostgreSQL
// (settlement-*.ts, gw-batch-function.ts), /v1/usage and /v1/me, the dashboard's usage views and its
// CSV export. Adding a dimension is one entry here plus one migration that adds its ledger columns
// (CONTRIBUTING.md, "Adding a billing dimension"); test/billing/dimensions.test.ts fails when a place
// does not follow, and test/billing/added-dimension.test.ts adds one to a copy of the list.
//
// The dimensions are disjoint: each token, call or unit is billed in exactly one of them, and a usage
// row's cost_nano is exactly the sum of its dimensions' cost columns (pricing.ts allocates the one
// rounding of the token part). Each token dimension is a part of the input or of the output: the parts
// of one total are capped within it in list order, and one of them counts the rest. This module
// imports nothing, so that every layer can read it.

/** How a dimension is counted and priced. */
export type DimensionUnit =
  /** Tokens, priced per million (nano-USD per Mtok); part of the one ceiling division of pricing.ts. */
  | "token"
  /** Whole units priced in nano-USD each: tool calls, requests, images, seconds of video. */
  | "unit";

/** The totals token dimensions divide: all input and all output tokens. */
export type TokenPart = "input" | "output";

/**
 * What the dimensions of a part divide: the Usage field and the ledger column holding the total (cached
 * reads and cache writes included for the input, reasoning for the output), and the admission
 * request's projection of it.
 */
export const TOKEN_PARTS = {
  input: { usageField: "inputTokens", column: "input_tokens", projectedField: "projectedInputTokens" },
  output: { usageField: "outputTokens", column: "output_tokens", projectedField: "projectedOutputTokens" },
} as const;

interface DimensionFields {
  /** The name in the API, the dashboard and the CSV (`<name>_cost_usd`). */
  readonly name: string;
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
   * The Usage field holding the count. A token dimension whose field is null or its part's total
   * (TOKEN_PARTS) counts the rest of its part: what the part's other dimensions leave. A unit
   * dimension without one counts 1 for every settled request.
   */
  readonly usageField: string | null;
  /** The ledger column storing the count; null when derived from other columns. */
  readonly countColumn: string | null;
  /** The ledger column storing this dimension's share of cost_nano. */
  readonly costColumn: string;
  /** A model's long_context tier may price it (token dimensions only). */
  readonly tiered: boolean;
  /**
   * Its part in prompt caching, for the cache saving (pricing.ts) and the cache summary of reports:
   * tokens read from the cache ("read") or written to it ("write"), priced against the input's price.
   */
  readonly cache: "read" | "write" | null;
}

/** A token dimension: a part of the request's input or output tokens. */
export interface TokenDimensionSpec extends DimensionFields {
  readonly unit: "token";
  readonly part: TokenPart;
  readonly priceField: string;
}

/** A unit dimension: a count of its own, priced per unit. */
export interface UnitDimensionSpec extends DimensionFields {
  readonly unit: "unit";
  readonly part: "count";
  /**
   * The AdmissionRequest field projecting the count, which the hold prices (projectCost); null: the
   * count cannot be projected and is not held, or (usageField null) it is 1 per request.
   */
  readonly projectedField: string | null;
}

export type DimensionSpec = TokenDimensionSpec | UnitDimensionSpec;

export const DIMENSIONS = [
  {
    name: "input",
    unit: "token",
    part: "input",
    counts: "tokens",
    priceKey: "input_per_mtok",
    priceDefault: null,
    priceField: "inputPerMtok",
    usageField: null,
    countColumn: null,
    costColumn: "input_cost_nano",
    tiered: true,
    cache: null,
  },
  {
    name: "cached_input",
    unit: "token",
    part: "input",
    counts: "tokens",
    priceKey: "cached_input_per_mtok",
    priceDefault: "input_per_mtok",
    priceField: "cachedInputPerMtok",
    usageField: "cachedInputTokens",
    countColumn: "cached_tokens",
    costColumn: "cached_input_cost_nano",
    tiered: true,
    cache: "read",
  },
  {
    name: "cache_write_5m",
    unit: "token",
    part: "input",
    counts: "tokens",
    priceKey: "cache_write_5m_per_mtok",
    priceDefault: "input_per_mtok",
    priceField: "cacheWrite5mPerMtok",
    usageField: "cacheWrite5mTokens",
    countColumn: "cache_write_5m_tokens",
    costColumn: "cache_write_5m_cost_nano",
    tiered: true,
    cache: "write",
  },
  {
    name: "cache_write_1h",
    unit: "token",
    part: "input",
    counts: "tokens",
    priceKey: "cache_write_1h_per_mtok",
    priceDefault: "cache_write_5m_per_mtok",
    priceField: "cacheWrite1hPerMtok",
    usageField: "cacheWrite1hTokens",
    countColumn: "cache_write_1h_tokens",
    costColumn: "cache_write_1h_cost_nano",
    tiered: true,
    cache: "write",
  },
  {
    name: "output",
    unit: "token",
    part: "output",
    counts: "tokens",
    priceKey: "output_per_mtok",
    priceDefault: null,
    priceField: "outputPerMtok",
    usageField: "outputTokens",
    countColumn: "output_tokens",
    costColumn: "output_cost_nano",
    tiered: true,
    cache: null,
  },
  {
    name: "web_search",
    unit: "unit",
    part: "count",
    counts: "calls",
    priceKey: "web_search_per_call",
    priceDefault: null,
    priceField: "webSearchPerCall",
    usageField: "webSearchCalls",
    countColumn: "web_search_calls",
    costColumn: "web_search_cost_nano",
    tiered: false,
    cache: null,
    projectedField: null,
  },
  {
    name: "request",
    unit: "unit",
    part: "count",
    counts: "requests",
    priceKey: "per_request",
    priceDefault: null,
    priceField: "perRequest",
    usageField: null,
    countColumn: null,
    costColumn: "request_cost_nano",
    tiered: false,
    cache: null,
    projectedField: null,
  },
  {
    name: "image",
    unit: "unit",
    part: "count",
    counts: "images",
    priceKey: null,
    priceDefault: null,
    priceField: null,
    usageField: "images",
    countColumn: "images",
    costColumn: "image_cost_nano",
    tiered: false,
    cache: null,
    projectedField: "projectedImages",
  },
  {
    name: "video_second",
    unit: "unit",
    part: "count",
    counts: "seconds",
    priceKey: "per_video_second",
    priceDefault: null,
    priceField: "perVideoSecond",
    usageField: "videoSeconds",
    countColumn: "video_seconds",
    costColumn: "video_cost_nano",
    tiered: false,
    cache: null,
    projectedField: "projectedVideoSeconds",
  },
] as const satisfies readonly DimensionSpec[];

export type Dimension = (typeof DIMENSIONS)[number];
export type DimensionName = Dimension["name"];

/** The Usage fields the dimensions count (the fields of Usage beyond these are not billed on their own). */
export type DimensionUsageField = Extract<Dimension["usageField"], string>;
/** The AdmissionRequest fields projecting the unit dimensions that are held (projectCost). */
export type DimensionProjectedField = Extract<Extract<Dimension, { unit: "unit" }>["projectedField"], string>;
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

/** The dimensions of one token part. */
export interface TokenPartDimensions {
  /** Those counted from their own Usage field, in list order: the order they are capped within the total. */
  readonly shares: readonly TokenDimensionSpec[];
  /** The one counting what the shares leave of the total. */
  readonly rest: TokenDimensionSpec;
  /** All of them, in list order. */
  readonly all: readonly TokenDimensionSpec[];
}

/**
 * A dimension list and what every layer derives from it, resolved once. The gateway runs on
 * DIMENSION_SET (DIMENSIONS); a test passes a copy of the list with an entry added (openDatabase's
 * `dimensions`), and everything that prices, stores and reports follows that copy.
 */
export interface DimensionSet {
  readonly list: readonly DimensionSpec[];
  readonly tokens: readonly TokenDimensionSpec[];
  readonly units: readonly UnitDimensionSpec[];
  readonly parts: { readonly [P in TokenPart]: TokenPartDimensions };
  readonly cacheReads: readonly TokenDimensionSpec[];
  readonly cacheWrites: readonly TokenDimensionSpec[];
  /** The Usage fields the dimensions count, each once (the totals they divide included). */
  readonly usageFields: readonly string[];
  /**
   * The ledger columns settlement writes from the list, in this order on both databases: the count
   * columns added for dimensions (those of 0001 excepted), every cost column, the cache saving.
   */
  readonly ledgerColumns: readonly string[];
}

/** One value per dimension, by name: those of DIMENSIONS typed, any other of an injected list by index. */
export type DimensionValues<T> = Readonly<Record<DimensionName, T>> & { readonly [name: string]: T };

/** The token parts, input first. */
export const TOKEN_PART_NAMES: readonly TokenPart[] = ["input", "output"];

const sets = new WeakMap<readonly DimensionSpec[], DimensionSet>();

/** The set of a dimension list (resolved once per list); throws when the list breaks a rule above. */
export function dimensionSet(list: readonly DimensionSpec[]): DimensionSet {
  let set = sets.get(list);
  if (set === undefined) sets.set(list, (set = resolve(list)));
  return set;
}

function resolve(list: readonly DimensionSpec[]): DimensionSet {
  const fail = (message: string): never => {
    throw new Error(`dimension list: ${message}`);
  };
  for (const key of ["name", "costColumn"] as const) {
    const seen = new Set<string>();
    for (const d of list) {
      if (seen.has(d[key])) fail(`two dimensions have the ${key} ${d[key]}`);
      seen.add(d[key]);
    }
  }
  const tokens = list.filter((d): d is TokenDimensionSpec => d.unit === "token");
  const units = list.filter((d): d is UnitDimensionSpec => d.unit === "unit");
  const partOf = (part: TokenPart): TokenPartDimensions => {
    const all = tokens.filter((d) => d.part === part);
    const rests = all.filter((d) => d.usageField === null || d.usageField === TOKEN_PARTS[part].usageField);
    if (rests.length !== 1) fail(`the ${part} needs exactly one dimension counting its rest, found ${rests.length}`);
    return { shares: all.filter((d) => d !== rests[0]), rest: rests[0]!, all };
  };
  const parts = { input: partOf("input"), output: partOf("output") };
  for (const d of list) {
    if ((d.unit === "token") !== (d.part !== "count")) fail(`${d.name}: a token dimension is part of the input or the output, a unit dimension a count`);
    if (d.cache !== null && (d.unit !== "token" || d.part !== "input" || d === parts.input.rest)) fail(`${d.name}: only a share of the input can be cache reads or writes`);
    if (d.unit === "unit" && d.usageField === null && d.projectedField !== null) fail(`${d.name}: a count of 1 per request has no projection`);
  }
  return {
    list,
    tokens,
    units,
    parts,
    cacheReads: tokens.filter((d) => d.cache === "read"),
    cacheWrites: tokens.filter((d) => d.cache === "write"),
    usageFields: [...new Set(list.flatMap((d) => (d.usageField === null ? [] : [d.usageField])))],
    ledgerColumns: [
      ...list.flatMap((d) => (d.countColumn !== null && !BASE_COUNT_COLUMNS.has(d.countColumn) ? [d.countColumn] : [])),
      ...list.map((d) => d.costColumn),
      CACHE_SAVING_COLUMN,
    ],
  };
}

/** The gateway's dimensions. */
export const DIMENSION_SET = dimensionSet(DIMENSIONS);

/** The ledger columns settlement writes from the dimension list (DimensionSet.ledgerColumns of DIMENSIONS). */
export const LEDGER_DIMENSION_COLUMNS: readonly string[] = DIMENSION_SET.ledgerColumns;
