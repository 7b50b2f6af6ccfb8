// Anthropic Messages <-> Chat Completions translation: requests, responses and stream state machines.
export type * from "./types.js";
export { convertMessagesRequestToChat } from "./convert-messages-request-to-chat.js";
export { convertChatResponseToMessages, type ChatToMessagesOptions } from "./convert-chat-response-to-messages.js";
export { ChatStreamToMessagesEvents, type ChatStreamToMessagesOptions } from "./chat-stream-to-messages-events.js";
export { convertChatRequestToMessages, type ChatToMessagesRequestOptions } from "./convert-chat-request-to-messages.js";
export { convertMessagesResponseToChat, type MessagesToChatOptions } from "./convert-messages-response-to-chat.js";
export { MessagesEventsToChatStream, type ChatStreamItem, type MessagesToChatStreamOptions } from "./messages-events-to-chat-stream.js";
export { mapFinishReasonToStopReason, mapStopReasonToFinishReason } from "./map-stop-reason.js";
export { convertChatUsageToAnthropic, convertAnthropicUsageToChat } from "./convert-usage.js";
