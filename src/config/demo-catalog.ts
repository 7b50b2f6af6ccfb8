// The demo catalog: one provider of the demo type and two chat models at small nominal prices. A
// gateway started without a config file serves it; a config file that defines providers serves it
// only with `demo: true` (docs/configuration.md, "Demo models").
import type { ModelFileEntry, ProviderFileEntry } from "./schema.js";

export const DEMO_PROVIDER = "demo";

/** Never contacted (the transport answers in-process); a reserved name that resolves nowhere. */
const DEMO_BASE_URL = "http://demo.invalid";

/** The provider's one shared "key": forward rotates keys, and the demo transport ignores it. */
export const DEMO_KEY = "demo-upstream-needs-no-key";

/** The credit the administrator account receives on a first start with demo models, USD. */
export const DEMO_CREDIT_USD = "5.00";

export const demoProvider: ProviderFileEntry = {
  type: "demo",
  base_url: DEMO_BASE_URL,
  keys: [DEMO_KEY],
  headers: {},
  timeout_ms: 60_000,
  connect_timeout_ms: 10_000,
  max_connections: 1_024,
  connection_wait_ms: 30_000,
  http2: true,
};

export const demoModels: ModelFileEntry[] = [
  {
    id: "demo-chat",
    kind: "chat",
    provider: DEMO_PROVIDER,
    upstream_model: "demo-chat",
    context_window: 128_000,
    pricing: { input_per_mtok: "0.50", output_per_mtok: "1.50" },
  },
  {
    id: "demo-fast",
    kind: "chat",
    provider: DEMO_PROVIDER,
    upstream_model: "demo-fast",
    context_window: 128_000,
    pricing: { input_per_mtok: "0.10", output_per_mtok: "0.40" },
  },
];
