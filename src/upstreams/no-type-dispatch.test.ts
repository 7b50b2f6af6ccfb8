// Every choice that depends on a provider's type goes through the upstream registry: outside
// src/upstreams/, no source compares or switches on a provider type's name.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { UPSTREAM_TYPES } from "./registry.js";

const SRC = fileURLToPath(new URL("..", import.meta.url));
const UPSTREAMS = fileURLToPath(new URL(".", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path + "/" === UPSTREAMS ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

const quoted = UPSTREAM_TYPES.map((name) => `["'\`]${name.replace(/[-]/g, "\\-")}["'\`]`).join("|");
const COMPARE = "(?:===|!==|==|!=)";
const PATTERNS = [
  // provider.type === x, x !== model.provider.type, switch (model.provider.type)
  new RegExp(`\\bprovider\\??\\.type\\s*${COMPARE}`),
  new RegExp(`${COMPARE}\\s*[\\w.?]*\\bprovider\\??\\.type\\b`),
  /\bswitch\s*\(\s*[\w.?]*\bprovider\??\.type\s*\)/,
  // case "openai":, type !== "google-operations", "anthropic" === type
  new RegExp(`\\bcase\\s+(?:${quoted})\\s*:`),
  new RegExp(`\\btype\\s*${COMPARE}\\s*(?:${quoted})`),
  new RegExp(`(?:${quoted})\\s*${COMPARE}\\s*[\\w.?]*\\btype\\b`),
];

/** The offending lines of one file's text. */
function typeDispatches(text: string): string[] {
  return text.split("\n").filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && PATTERNS.some((pattern) => pattern.test(line)));
}

describe("dispatch on upstream type", () => {
  it("recognises the forms it forbids", () => {
    expect(typeDispatches('if (model.provider.type === "openai") x();')).toHaveLength(1);
    expect(typeDispatches("switch (provider.type) {")).toHaveLength(1);
    expect(typeDispatches('  case "anthropic":')).toHaveLength(1);
    expect(typeDispatches('if (type !== "google-operations") throw e;')).toHaveLength(1);
    expect(typeDispatches('if ("openai" !== model.provider.type) x();')).toHaveLength(1);
    expect(typeDispatches('const a = { type: "openai" };')).toHaveLength(0);
    expect(typeDispatches('if (shape === "anthropic") x();')).toHaveLength(0);
    expect(typeDispatches("const upstream = upstreams[provider.type];")).toHaveLength(0);
  });

  it("happens only in src/upstreams/", () => {
    const found = sourceFiles(SRC).flatMap((path) => typeDispatches(readFileSync(path, "utf8")).map((line) => `${relative(SRC, path)}: ${line.trim()}`));
    expect(found).toEqual([]);
  });
});
