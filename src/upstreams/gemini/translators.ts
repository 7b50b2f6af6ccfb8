// Google Gemini API (generateContent) <-> Chat Completions: requests, responses, streams and usage.
export type * from "../../wire/gemini/types.js";
export { convertChatRequestToGemini } from "./convert-chat-request-to-gemini.js";
export { convertGeminiResponseToChat, type GeminiToChatOptions } from "./convert-gemini-response-to-chat.js";
export { GeminiChunksToChatStream, type GeminiToChatStreamOptions } from "./gemini-chunks-to-chat-stream.js";
export { convertGeminiUsageToChat } from "./convert-usage.js";
