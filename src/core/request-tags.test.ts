import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors/catalogue.js";
import { checkedDefaultTags, checkedTagText, MAX_TAGS, mergeTags, parseTagsHeader, tagScope, tagTexts } from "./request-tags.js";

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("x-gateway-tags", () => {
  it("parses key=value pairs, lowers keys, trims, and reads an absent or blank header as no tags", () => {
    expect(parseTagsHeader(" Project = atlas , env=prod")).toEqual({ project: "atlas", env: "prod" });
    expect(parseTagsHeader("team.name_1-x=Cost Centre 42/b")).toEqual({ "team.name_1-x": "Cost Centre 42/b" });
    expect(parseTagsHeader(undefined)).toEqual({});
    expect(parseTagsHeader("  ")).toEqual({});
    // A repeated header (Node joins unknown ones) counts as one list.
    expect(parseTagsHeader(["a=1", "b=2"])).toEqual({ a: "1", b: "2" });
  });

  it("takes exactly the bounds: 10 tags, a 64-character key, a 128-character value", () => {
    const ten = Array.from({ length: MAX_TAGS }, (_, i) => `k${i}=v`).join(",");
    expect(Object.keys(parseTagsHeader(ten))).toHaveLength(10);
    expect(parseTagsHeader(`${"k".repeat(64)}=${"v".repeat(128)}`)).toEqual({ ["k".repeat(64)]: "v".repeat(128) });
    for (const bad of [
      `${ten},k10=v`,
      `${"k".repeat(65)}=v`,
      `k=${"v".repeat(129)}`,
      "novalue",
      "k=",
      "=v",
      "k=a=b",
      "_k=v",
      "k y=v",
      "k=v\u0001",
      "k=caf\u00e9",
      "k=1,k=2",
      "a=1,,b=2",
      "x".repeat(3000),
    ]) {
      const error = refusal(() => parseTagsHeader(bad));
      expect(error.type, bad).toBe("invalid_request");
      expect(error.status).toBe(400);
      expect(error.details.param).toBe("x-gateway-tags");
      expect(error.message).toMatch(/^The x-gateway-tags header is malformed/);
    }
  });

  it("merges the key's default tags over the request's (a default wins) within 10 in all", () => {
    expect(mergeTags({ project: "atlas" }, { project: "other", env: "prod" })).toEqual({ project: "atlas", env: "prod" });
    expect(mergeTags(null, { env: "prod" })).toEqual({ env: "prod" });
    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`d${i}`, "v"]));
    expect(Object.keys(mergeTags(nine, { d0: "x", extra: "y" }))).toHaveLength(10);
    expect(refusal(() => mergeTags(nine, { extra: "y", more: "z" })).message).toMatch(/default tags, at most 10 tags in all/);
    expect(tagTexts({ env: "prod", project: "atlas" })).toEqual(["env=prod", "project=atlas"]);
  });

  it("checks default tags and a budget's tag with the same rules, naming the field", () => {
    expect(checkedDefaultTags({ Project: " atlas " }, "default_tags")).toEqual({ project: "atlas" });
    expect(refusal(() => checkedDefaultTags({ "bad key": "v" }, "default_tags")).details.param).toBe("default_tags");
    expect(refusal(() => checkedDefaultTags({ k: "a,b" }, "default_tags")).message).toMatch(/^default_tags: a tag value/);
    expect(checkedTagText("Project=atlas", "tag")).toBe("project=atlas");
    expect(refusal(() => checkedTagText("project", "tag")).details.param).toBe("tag");
    expect(tagScope("project=atlas", null)).toBe("tag:project=atlas");
    expect(tagScope("project=atlas", "acct_1")).toBe("tag@acct_1:project=atlas");
  });
});
