// Builds the Responses `response` object shared by the non-streaming converter and the stream's
// created / in_progress / completed snapshots: ids, echoed request config, status and usage.
import { readChatUsage } from "../../wire/chat/read-chat-usage.js";
import type { ChatThinkingBlock, ChatUsage } from "../../wire/chat/types.js";
import { encodeThinkingBlocks } from "../../wire/shared/reasoning.js";
import type { ToolNamespaces } from "./convert-responses-tools-to-chat.js";
import type {
  ResponsesObject,
  ResponsesOutputFunctionCall,
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesStatus,
  ResponsesTextFormat,
  ResponsesUsage,
} from "../../wire/responses/types.js";

export interface ResponsesBuildOptions {
  /** Response id ("resp_..."); random when absent. */
  id?: string;
  /** Unix seconds for created_at; the clock's now when absent. */
  createdAt?: number;
  /** Clock for created_at / completed_at in Unix seconds; injectable so tests are deterministic. */
  clock?: () => number;
  /** Model name to report; the upstream's when absent. */
  model?: string;
  /** The client's request, echoed into the response object as the API does. */
  request?: ResponsesRequest;
  /** From convertResponsesRequestToChat: restores namespaced function names. */
  toolNamespaces?: ToolNamespaces;
}

export function convertChatUsageToResponses(usage: ChatUsage | null | undefined): ResponsesUsage {
  const counts = readChatUsage(usage);
  return {
    input_tokens: counts.promptTokens,
    input_tokens_details: { cached_tokens: counts.cachedTokens },
    output_tokens: counts.completionTokens,
    output_tokens_details: { reasoning_tokens: counts.reasoningTokens },
    total_tokens: counts.totalTokens,
  };
}

/** Chat finish_reason -> Responses status and incomplete_details (wire-formats.md §2.8). */
export function mapFinishReasonToStatus(finishReason: string | null | undefined): {
  status: ResponsesStatus;
  incompleteDetails: ResponsesObject["incomplete_details"];
} {
  if (finishReason === "length") return { status: "incomplete", incompleteDetails: { reason: "max_output_tokens" } };
  if (finishReason === "content_filter") return { status: "incomplete", incompleteDetails: { reason: "content_filter" } };
  return { status: "completed", incompleteDetails: null };
}

/** A function_call output item, with the client's namespace restored when the name was flattened. */
export function buildFunctionCallItem(
  id: string,
  call: { id: string; name: string; arguments: string },
  status: ResponsesOutputFunctionCall["status"],
  toolNamespaces: ToolNamespaces | undefined,
): ResponsesOutputFunctionCall {
  const original = toolNamespaces?.[call.name];
  const item: ResponsesOutputFunctionCall = {
    type: "function_call",
    id,
    call_id: call.id,
    name: original?.name ?? call.name,
    arguments: call.arguments,
    status,
  };
  if (original !== undefined) item.namespace = original.namespace;
  return item;
}

/** A completed reasoning item: the thinking text as its summary, the signed blocks, when there are some, as encrypted_content. */
export function buildReasoningItem(id: string, text: string, blocks: readonly ChatThinkingBlock[]): ResponsesOutputItem {
  const item: ResponsesOutputItem = { type: "reasoning", id, summary: text === "" ? [] : [{ type: "summary_text", text }], status: "completed" };
  if (blocks.length > 0) item.encrypted_content = encodeThinkingBlocks(blocks);
  return item;
}

export function buildResponseObject(
  base: { id: string; createdAt: number; model: string; request: ResponsesRequest | undefined },
  state: {
    status: ResponsesStatus;
    output: ResponsesOutputItem[];
    usage: ResponsesUsage | null;
    incompleteDetails?: ResponsesObject["incomplete_details"];
    error?: ResponsesObject["error"];
    completedAt?: number | null;
  },
): ResponsesObject {
  const request = base.request ?? {};
  const response: ResponsesObject = {
    id: base.id,
    object: "response",
    created_at: base.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    model: base.model,
    output: state.output,
    usage: state.usage,
    error: state.error ?? null,
    incomplete_details: state.incompleteDetails ?? null,
    instructions: typeof request.instructions === "string" ? request.instructions : null,
    metadata: request.metadata ?? {},
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? null,
    top_p: request.top_p ?? null,
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    max_output_tokens: request.max_output_tokens ?? null,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    text: { format: textFormat(request), verbosity: request.text?.verbosity ?? "medium" },
    truncation: "disabled",
  };
  if (typeof request.user === "string") response.user = request.user;
  return response;
}

function textFormat(request: ResponsesRequest): ResponsesTextFormat {
  return request.text?.format ?? { type: "text" };
}
