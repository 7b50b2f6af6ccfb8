// Bedrock Runtime Converse <-> Chat Completions translation: request, response, stream state machine.
export type * from "./types.js";
export { convertChatRequestToConverse, type ChatToConverseOptions } from "./convert-chat-request-to-converse.js";
export { convertConverseResponseToChat, type ConverseToChatOptions } from "./convert-converse-response-to-chat.js";
export { ConverseEventsToChatStream, type ConverseToChatStreamOptions } from "./converse-events-to-chat-stream.js";
export { convertConverseUsageToChat, mapConverseStopReason } from "./convert-usage.js";
