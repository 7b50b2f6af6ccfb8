// npm run check:layers: the layers of src/ and web/src/, lowest first. A module imports only from its own
// layer or the ones below it; no module imports itself back, directly or around a loop; and nothing
// outside src/upstreams/ reaches an upstream type's folder except through the registry. Type-only
// imports count too: a type that runs upward ties the lower layer's design to the upper one.
// There is no exceptions list: a shared helper that two upper layers need moves down.
/** Layers of src/, lowest first: each entry is a folder of src/ (or a file, for app.ts). */
const SRC_LAYERS = [
  ["errors"],
  ["core"],
  ["observability"],
  ["store"],
  ["billing"],
  ["requestlog"],
  ["wire"],
  ["upstreams"],
  ["config"],
  ["accounts"],
  ["formats"],
  ["pipeline"],
  ["http"],
  ["media"],
  ["mcp"],
  ["admin"],
  ["dashboard"],
  ["openapi"],
  ["app.ts"],
  ["cli"],
];

/** Layers of web/src/, lowest first; modules of one entry may import each other. */
const WEB_LAYERS = [["api.ts", "api-catalog.ts", "format.ts", "router.ts", "snippets.ts"], ["chart.tsx", "components.tsx", "dialog.tsx"], ["pages"], ["app.tsx"], ["main.tsx"]];

const escape = (name) => name.replace(/[.]/g, "\\.");
/** A path pattern for the modules of some layer entries of a root folder. */
const under = (root, names) => `^${root}/(${names.map((name) => (name.includes(".") ? `${escape(name)}$` : `${escape(name)}/`)).join("|")})`;

function layerRules(root, layers) {
  return layers.slice(0, -1).map((layer, index) => ({
    name: `layer-${root.replace(/\W+/g, "-")}-${layer.join("-").replace(/\W+/g, "-")}`,
    severity: "error",
    comment: `${root}/{${layer.join(",")}} imports a higher layer (${root}: ${layers.map((l) => l.join("+")).join(" < ")}): move the shared part down.`,
    from: { path: under(root, layer) },
    to: { path: under(root, layers.slice(index + 1).flat()) },
  }));
}

/** @type {import('dependency-cruiser').IConfiguration} */
const config = {
  forbidden: [
    ...layerRules("src", SRC_LAYERS),
    ...layerRules("web/src", WEB_LAYERS),
    {
      name: "upstream-type-through-registry",
      severity: "error",
      comment: "An upstream type's folder is reached through src/upstreams/registry.ts (upstreamOf), or src/upstreams/capabilities.ts for its capabilities, not imported directly.",
      from: { path: "^src/", pathNot: ["^src/upstreams/", "\\.test\\.ts$"] },
      to: { path: "^src/upstreams/[^/]+/" },
    },
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle: break it by moving the shared part into a module both can import.",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".mjs"] },
  },
};

module.exports = config;
