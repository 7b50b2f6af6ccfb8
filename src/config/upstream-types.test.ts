// The registry's contract: every descriptor has every part (the compiler refuses one without), the
// config's provider types are exactly the registry's keys, and the capabilities the config loader
// checks against (capabilities.ts) are the descriptors' own.
import { describe, expect, it } from "vitest";
import { providerSchema } from "./schema.js";
import { anthropicUpstream } from "../upstreams/anthropic/index.js";
import type { UpstreamDescriptor } from "../upstreams/descriptor.js";
import { upstreamCapabilities } from "../upstreams/capabilities.js";
import { UPSTREAM_TYPES, upstreams } from "../upstreams/registry.js";

const REQUIRED_PARTS = ["authenticate", "transport", "streamDecoder", "chatPlan", "nativePlans", "readUsage", "media", "capabilities", "keyTest"] as const satisfies ReadonlyArray<
  keyof UpstreamDescriptor
>;

describe("upstream descriptors", () => {
  it("does not compile a descriptor missing a part", () => {
    const { authenticate, streamDecoder, nativePlans, readUsage, media, capabilities } = anthropicUpstream;
    // @ts-expect-error chatPlan is required: an upstream without one says null, it does not leave it out
    const incomplete: UpstreamDescriptor = { authenticate, streamDecoder, nativePlans, readUsage, media, capabilities };
    expect(incomplete).not.toHaveProperty("chatPlan");
  });

  it.each(Object.entries(upstreams))("%s has every part", (_name, descriptor: UpstreamDescriptor) => {
    for (const part of REQUIRED_PARTS) expect(descriptor, part).toHaveProperty(part);
    expect(typeof descriptor.authenticate).toBe("function");
    expect(typeof descriptor.streamDecoder).toBe("function");
    expect(typeof descriptor.streamDecoder().push).toBe("function");
    expect(typeof descriptor.readUsage).toBe("function");
    expect(descriptor.chatPlan === null || typeof descriptor.chatPlan === "function").toBe(true);
    expect(descriptor.capabilities.kinds.length).toBeGreaterThan(0);
    // A chat model needs a Chat plan; image, video and embedding models need the media adapter.
    expect(descriptor.capabilities.kinds.includes("chat")).toBe(descriptor.chatPlan !== null);
    // A key test is a one-token chat: only types with a Chat plan have one.
    expect(descriptor.keyTest === null || descriptor.chatPlan !== null).toBe(true);
    expect(descriptor.capabilities.kinds.includes("image")).toBe(descriptor.media.images !== undefined);
    expect(descriptor.capabilities.kinds.includes("video")).toBe(descriptor.media.videos !== undefined);
    expect(descriptor.capabilities.kinds.includes("embedding")).toBe(descriptor.media.embeddings !== undefined);
    for (const api of descriptor.capabilities.defaultApis) expect(descriptor.capabilities.apis).toContain(api);
  });

  it("offers exactly the registry's keys as provider types", () => {
    expect(UPSTREAM_TYPES).toEqual(Object.keys(upstreams));
    for (const type of UPSTREAM_TYPES) expect(providerSchema.shape.type.safeParse(type).success).toBe(true);
    expect(providerSchema.shape.type.safeParse("not-a-type").success).toBe(false);
  });

  it("gives each descriptor the capabilities the config loader checks against", () => {
    expect(Object.keys(upstreamCapabilities)).toEqual(Object.keys(upstreams));
    for (const type of UPSTREAM_TYPES) expect(upstreams[type].capabilities).toBe(upstreamCapabilities[type]);
  });
});
