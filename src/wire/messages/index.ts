// The Anthropic Messages wire format, spoken by Messages clients and Anthropic-native upstreams alike.
export type * from "./types.js";
export { mapFinishReasonToStopReason, mapStopReasonToFinishReason } from "./map-stop-reason.js";
export { convertChatUsageToAnthropic, convertAnthropicUsageToChat } from "./convert-usage.js";
