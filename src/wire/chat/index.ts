// OpenAI Chat Completions: the interchange format. Types plus the helpers the other formats share.
export type * from "./types.js";
export { USAGE_EXTRAS } from "./types.js";
export { readChatUsage, type ChatUsageCounts } from "./read-chat-usage.js";
export { ToolCallSequencer, type ToolCallOperation } from "./sequence-tool-call-deltas.js";
export { setTokenLimit, type ChatTargetOptions } from "./chat-target-options.js";
export { assembleChatStream } from "./assemble-chat-stream.js";
