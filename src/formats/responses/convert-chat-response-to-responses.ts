// Chat Completions response -> Responses object (non-streaming), wire-formats.md §2.8. `output_text` is
// not set: it is a convenience the SDK computes client-side, not a wire field.
import type { ChatCompletion } from "../../wire/chat/types.js";
import { nowSeconds, randomIdSuffix } from "../../wire/shared/ids.js";
import {
  buildFunctionCallItem,
  buildReasoningItem,
  buildResponseObject,
  convertChatUsageToResponses,
  mapFinishReasonToStatus,
  type ResponsesBuildOptions,
} from "./build-response-object.js";
import type { ResponsesObject, ResponsesOutputItem, ResponsesOutputMessage } from "../../wire/responses/types.js";

export function convertChatResponseToResponses(response: ChatCompletion, options: ResponsesBuildOptions = {}): ResponsesObject {
  const id = options.id ?? `resp_${randomIdSuffix()}`;
  const suffix = id.replace(/^resp_/, "");
  const choice = response.choices?.[0];
  const message = choice?.message;
  const output: ResponsesOutputItem[] = [];
  const reasoning = typeof message?.reasoning_content === "string" ? message.reasoning_content : "";
  const thinkingBlocks = message?.thinking_blocks ?? [];
  if (reasoning !== "" || thinkingBlocks.length > 0) output.push(buildReasoningItem(`rs_${suffix}`, reasoning, thinkingBlocks));
  const text = typeof message?.content === "string" ? message.content : "";
  const refusal = typeof message?.refusal === "string" ? message.refusal : "";
  if (text !== "" || refusal !== "") {
    const item: ResponsesOutputMessage = { type: "message", id: `msg_${suffix}`, role: "assistant", status: "completed", content: [] };
    if (text !== "") item.content.push({ type: "output_text", text, annotations: [] });
    if (refusal !== "") item.content.push({ type: "refusal", refusal });
    output.push(item);
  }
  (message?.tool_calls ?? []).forEach((call, i) => {
    output.push(buildFunctionCallItem(`fc_${suffix}_${i}`, { id: call.id, name: call.function.name, arguments: call.function.arguments }, "completed", options.toolNamespaces));
  });
  const { status, incompleteDetails } = mapFinishReasonToStatus(choice?.finish_reason);
  const now = options.clock ?? nowSeconds;
  const createdAt = options.createdAt ?? (typeof response.created === "number" ? response.created : now());
  return buildResponseObject(
    { id, createdAt, model: options.model ?? response.model, request: options.request },
    { status, output, usage: convertChatUsageToResponses(response.usage), incompleteDetails, completedAt: now() },
  );
}
