// OpenAI Responses <-> Chat Completions bridge: request, response, stream state machine, history helper.
export type * from "../../wire/responses/types.js";
export { convertResponsesRequestToChat, type ResponsesToChatOptions, type ResponsesToChatResult } from "./convert-responses-request-to-chat.js";
export { convertChatResponseToResponses } from "./convert-chat-response-to-responses.js";
export { ChatStreamToResponsesEvents } from "./chat-stream-to-responses-events.js";
export { convertChatMessagesForHistory, convertChatResponseToAssistantMessage } from "./convert-chat-messages-for-history.js";
export { convertChatUsageToResponses, mapFinishReasonToStatus, type ResponsesBuildOptions } from "./build-response-object.js";
export { flattenToolName, type ToolNamespaces } from "./convert-responses-tools-to-chat.js";
