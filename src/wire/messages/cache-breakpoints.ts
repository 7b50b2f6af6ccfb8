// Prompt-cache breakpoints on a translated Anthropic request. A client's own markers (cache_control on
// Chat parts, tools and messages) are kept; a request with none gets them placed here, on the tools,
// the system prompt and the latest turns, within Anthropic's limit (docs/clients.md, "Prompt caching").
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatCacheControl } from "../chat/types.js";
import { isRecord } from "../shared/narrow.js";
import type { AnthropicContentBlockParam, AnthropicMessagesRequest } from "./types.js";

/** Anthropic refuses a request with more cache_control breakpoints than this. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** "auto": place breakpoints when the client placed none; "off": only the client's own. */
export type CacheBreakpointMode = "auto" | "off";

const EPHEMERAL: ChatCacheControl = { type: "ephemeral" };

/** A client's cache_control, validated: Anthropic takes only {type: "ephemeral", ttl?: "5m" | "1h"}. */
export function readCacheControl(value: unknown, path: string): ChatCacheControl | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value) || value.type !== "ephemeral") throw invalidRequest(path, `${path} must be {"type": "ephemeral"} with an optional ttl.`);
  for (const key of Object.keys(value)) {
    if (key !== "type" && key !== "ttl") throw invalidRequest(`${path}.${key}`, `${path} takes only type and ttl.`);
  }
  if (value.ttl === undefined || value.ttl === null) return { type: "ephemeral" };
  if (value.ttl !== "5m" && value.ttl !== "1h") throw invalidRequest(`${path}.ttl`, `${path}.ttl must be "5m" or "1h".`);
  return { type: "ephemeral", ttl: value.ttl };
}

/** Thinking blocks cannot carry a breakpoint; every other block type can. */
function cacheable(block: AnthropicContentBlockParam): boolean {
  return block.type !== "thinking" && block.type !== "redacted_thinking";
}

function countBreakpoints(request: AnthropicMessagesRequest): number {
  let count = (request.tools ?? []).filter((tool) => tool.cache_control !== undefined).length;
  if (Array.isArray(request.system)) count += request.system.filter((block) => block.cache_control !== undefined).length;
  for (const turn of request.messages) {
    if (Array.isArray(turn.content)) count += turn.content.filter((block) => "cache_control" in block && block.cache_control !== undefined).length;
  }
  return count;
}

function markLastCacheable(blocks: AnthropicContentBlockParam[]): boolean {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    if (!cacheable(block)) continue;
    (block as { cache_control?: unknown }).cache_control = { ...EPHEMERAL };
    return true;
  }
  return false;
}

/**
 * Applies the breakpoint policy to a request built from Chat. The client's markers win: with one or
 * more present, none is added (more than four is refused here, as Anthropic would). Otherwise, in
 * auto mode, one each on: the last tool, the system prompt, the last turn, and the user turn before
 * it (where the previous request of a conversation put its last one, so that request's cache is read).
 */
export function placeCacheBreakpoints(request: AnthropicMessagesRequest, mode: CacheBreakpointMode): void {
  const existing = countBreakpoints(request);
  if (existing > MAX_CACHE_BREAKPOINTS) {
    throw invalidRequest("messages", `At most ${MAX_CACHE_BREAKPOINTS} cache_control breakpoints are allowed; the request has ${existing}.`);
  }
  if (existing > 0 || mode === "off") return;
  const lastTool = request.tools?.at(-1);
  if (lastTool !== undefined) lastTool.cache_control = { ...EPHEMERAL };
  if (typeof request.system === "string" && request.system !== "") request.system = [{ type: "text", text: request.system, cache_control: { ...EPHEMERAL } }];
  else if (Array.isArray(request.system) && request.system.length > 0) request.system.at(-1)!.cache_control = { ...EPHEMERAL };
  let turnMarks = 0;
  for (let i = request.messages.length - 1; i >= 0 && turnMarks < 2; i--) {
    const turn = request.messages[i]!;
    // The last turn whatever its role, then the latest user turn before it.
    if (turnMarks === 1 && turn.role !== "user") continue;
    if (typeof turn.content === "string") {
      if (turn.content === "") continue;
      turn.content = [{ type: "text", text: turn.content }];
    }
    if (markLastCacheable(turn.content)) turnMarks += 1;
  }
}
