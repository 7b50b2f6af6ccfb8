// Chat stream chunks -> Responses stream events (wire-formats.md §2.9), each with a sequence_number from 0.
// A normal end always emits output_item.done for every item and a terminal response event: Codex CLI
// treats a stream without them as failed. Reasoning (delta.reasoning_content and the signed
// delta.thinking_blocks) becomes a reasoning item, its text streamed as a summary.
import { ToolCallSequencer, type ToolCallOperation } from "../../wire/chat/sequence-tool-call-deltas.js";
import type { ChatAssistantMessage, ChatCompletionChunk, ChatThinkingBlock, ChatUsage } from "../../wire/chat/types.js";
import { nowSeconds, randomIdSuffix } from "../../wire/shared/ids.js";
import {
  buildFunctionCallItem,
  buildReasoningItem,
  buildResponseObject,
  convertChatUsageToResponses,
  mapFinishReasonToStatus,
  type ResponsesBuildOptions,
} from "./build-response-object.js";
import type {
  ResponsesObject,
  ResponsesOutputFunctionCall,
  ResponsesOutputItem,
  ResponsesStatus,
  ResponsesStreamEvent,
  ResponsesStreamEventBody,
} from "../../wire/responses/types.js";

interface OpenMessage {
  id: string;
  outputIndex: number;
  kind: "text" | "refusal";
  text: string;
}

interface OpenReasoning {
  id: string;
  outputIndex: number;
  text: string;
  /** Whether a summary part was opened (redacted thinking alone has no text to show). */
  summaryOpen: boolean;
  blocks: ChatThinkingBlock[];
}

type Phase = "idle" | "streaming" | "choice-finished" | "done";

export class ChatStreamToResponsesEvents {
  private readonly id: string;
  private readonly createdAt: number;
  private readonly clock: () => number;
  private model: string;
  private sequence = 0;
  private phase: Phase = "idle";
  private readonly output: ResponsesOutputItem[] = [];
  private message: OpenMessage | undefined;
  private reasoning: OpenReasoning | undefined;
  private reasoningText = "";
  private readonly thinkingBlocks: ChatThinkingBlock[] = [];
  private readonly toolItems = new Map<number, ResponsesOutputFunctionCall & { outputIndex: number }>();
  private readonly tools = new ToolCallSequencer();
  private finishReason: string | null = null;
  private usage: ChatUsage | undefined;
  private text = "";
  private finalResponse: ResponsesObject | undefined;

  constructor(private readonly options: ResponsesBuildOptions = {}) {
    this.id = options.id ?? `resp_${randomIdSuffix()}`;
    this.clock = options.clock ?? nowSeconds;
    this.createdAt = options.createdAt ?? this.clock();
    this.model = options.model ?? "";
  }

  /** The terminal response object once the stream has ended (for storage and metering). */
  get response(): ResponsesObject | undefined {
    return this.finalResponse;
  }

  /** The assistant turn as a Chat message, for previous_response_id history. */
  assistantMessage(): ChatAssistantMessage {
    const calls = this.tools.calls();
    const message: ChatAssistantMessage = { role: "assistant", content: this.text === "" && calls.length > 0 ? null : this.text };
    if (calls.length > 0) message.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    if (this.thinkingBlocks.length > 0) {
      message.reasoning_content = this.reasoningText;
      message.thinking_blocks = [...this.thinkingBlocks];
    }
    return message;
  }

  push(chunk: ChatCompletionChunk): ResponsesStreamEvent[] {
    if (this.phase === "done") return [];
    if (this.phase === "idle" && this.options.model === undefined && typeof chunk.model === "string") this.model = chunk.model;
    const events = this.start();
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => c.index === 0) ?? (chunk.choices?.length === 1 ? chunk.choices[0] : undefined);
    if (choice !== undefined && this.phase === "streaming") {
      const delta = choice.delta ?? {};
      if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") events.push(...this.appendReasoning(delta.reasoning_content));
      if (Array.isArray(delta.thinking_blocks) && delta.thinking_blocks.length > 0) events.push(...this.addThinkingBlocks(delta.thinking_blocks));
      if (typeof delta.content === "string" && delta.content !== "") events.push(...this.appendText("text", delta.content));
      if (typeof delta.refusal === "string" && delta.refusal !== "") events.push(...this.appendText("refusal", delta.refusal));
      if (delta.tool_calls !== undefined && delta.tool_calls.length > 0) events.push(...this.applyToolOps(this.tools.push(delta.tool_calls)));
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        this.finishReason = choice.finish_reason;
        events.push(...this.closeItems());
        this.phase = "choice-finished";
      }
    }
    if (this.phase === "choice-finished" && this.usage !== undefined) events.push(...this.end());
    return events;
  }

  /** End of the upstream stream: closes open items and emits the terminal event, if not yet sent. */
  finish(): ResponsesStreamEvent[] {
    if (this.phase === "done") return [];
    const events = this.start();
    events.push(...this.closeItems(), ...this.end());
    return events;
  }

  /** Upstream failed mid-stream: response.failed; nothing else is emitted afterwards. */
  abort(message: string, code = "server_error"): ResponsesStreamEvent[] {
    if (this.phase === "done") return [];
    const events = this.start();
    this.phase = "done";
    this.finalResponse = this.snapshot("failed", { error: { code, message } });
    events.push(this.emit({ type: "response.failed", response: this.finalResponse }));
    return events;
  }

  private start(): ResponsesStreamEvent[] {
    if (this.phase !== "idle") return [];
    this.phase = "streaming";
    return [
      this.emit({ type: "response.created", response: this.snapshot("in_progress", { usage: null, output: [] }) }),
      this.emit({ type: "response.in_progress", response: this.snapshot("in_progress", { usage: null, output: [] }) }),
    ];
  }

  private openReasoning(events: ResponsesStreamEvent[]): OpenReasoning {
    if (this.reasoning !== undefined) return this.reasoning;
    events.push(...this.applyToolOps(this.tools.closeOpen()), ...this.closeMessage());
    const outputIndex = this.output.length;
    const reasoning: OpenReasoning = { id: `rs_${this.id.replace(/^resp_/, "")}_${outputIndex}`, outputIndex, text: "", summaryOpen: false, blocks: [] };
    this.reasoning = reasoning;
    const item: ResponsesOutputItem = { type: "reasoning", id: reasoning.id, summary: [], status: "in_progress" };
    this.output.push(item);
    events.push(this.emit({ type: "response.output_item.added", output_index: outputIndex, item: structuredClone(item) }));
    return reasoning;
  }

  private appendReasoning(delta: string): ResponsesStreamEvent[] {
    const events: ResponsesStreamEvent[] = [];
    const reasoning = this.openReasoning(events);
    const at = { item_id: reasoning.id, output_index: reasoning.outputIndex, summary_index: 0 };
    if (!reasoning.summaryOpen) {
      reasoning.summaryOpen = true;
      events.push(this.emit({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" } }));
    }
    reasoning.text += delta;
    this.reasoningText += delta;
    events.push(this.emit({ type: "response.reasoning_summary_text.delta", ...at, delta }));
    return events;
  }

  private addThinkingBlocks(blocks: readonly ChatThinkingBlock[]): ResponsesStreamEvent[] {
    const events: ResponsesStreamEvent[] = [];
    const reasoning = this.openReasoning(events);
    reasoning.blocks.push(...blocks);
    this.thinkingBlocks.push(...blocks);
    return events;
  }

  private closeReasoning(): ResponsesStreamEvent[] {
    const reasoning = this.reasoning;
    if (reasoning === undefined) return [];
    this.reasoning = undefined;
    const events: ResponsesStreamEvent[] = [];
    const at = { item_id: reasoning.id, output_index: reasoning.outputIndex, summary_index: 0 };
    if (reasoning.summaryOpen) {
      events.push(
        this.emit({ type: "response.reasoning_summary_text.done", ...at, text: reasoning.text }),
        this.emit({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text: reasoning.text } }),
      );
    }
    const item = buildReasoningItem(reasoning.id, reasoning.text, reasoning.blocks);
    this.output[reasoning.outputIndex] = item;
    events.push(this.emit({ type: "response.output_item.done", output_index: reasoning.outputIndex, item: structuredClone(item) }));
    return events;
  }

  private appendText(kind: "text" | "refusal", delta: string): ResponsesStreamEvent[] {
    const events = [...this.closeReasoning(), ...this.applyToolOps(this.tools.closeOpen())];
    if (this.message !== undefined && this.message.kind !== kind) events.push(...this.closeMessage());
    if (this.message === undefined) {
      const message: OpenMessage = { id: `msg_${this.id.replace(/^resp_/, "")}_${this.output.length}`, outputIndex: this.output.length, kind, text: "" };
      this.message = message;
      const item: ResponsesOutputItem = { type: "message", id: message.id, role: "assistant", status: "in_progress", content: [] };
      this.output.push(item);
      events.push(
        this.emit({ type: "response.output_item.added", output_index: message.outputIndex, item: structuredClone(item) }),
        this.emit({ type: "response.content_part.added", item_id: message.id, output_index: message.outputIndex, content_index: 0, part: emptyPart(kind) }),
      );
    }
    const { id, outputIndex } = this.message;
    this.message.text += delta;
    if (kind === "text") this.text += delta;
    events.push(
      kind === "text"
        ? this.emit({ type: "response.output_text.delta", item_id: id, output_index: outputIndex, content_index: 0, delta, logprobs: [] })
        : this.emit({ type: "response.refusal.delta", item_id: id, output_index: outputIndex, content_index: 0, delta }),
    );
    return events;
  }

  private closeMessage(): ResponsesStreamEvent[] {
    const message = this.message;
    if (message === undefined) return [];
    this.message = undefined;
    const { id, outputIndex, text } = message;
    const part = message.kind === "text" ? { type: "output_text" as const, text, annotations: [] } : { type: "refusal" as const, refusal: text };
    const item: ResponsesOutputItem = { type: "message", id, role: "assistant", status: "completed", content: [part] };
    this.output[outputIndex] = item;
    const done =
      message.kind === "text"
        ? this.emit({ type: "response.output_text.done", item_id: id, output_index: outputIndex, content_index: 0, text, logprobs: [] })
        : this.emit({ type: "response.refusal.done", item_id: id, output_index: outputIndex, content_index: 0, refusal: text });
    return [
      done,
      this.emit({ type: "response.content_part.done", item_id: id, output_index: outputIndex, content_index: 0, part: structuredClone(part) }),
      this.emit({ type: "response.output_item.done", output_index: outputIndex, item: structuredClone(item) }),
    ];
  }

  private applyToolOps(ops: ToolCallOperation[]): ResponsesStreamEvent[] {
    const events: ResponsesStreamEvent[] = [];
    for (const op of ops) {
      if (op.kind === "start") {
        events.push(...this.closeReasoning(), ...this.closeMessage());
        const outputIndex = this.output.length;
        const item = buildFunctionCallItem(
          `fc_${this.id.replace(/^resp_/, "")}_${outputIndex}`,
          { id: op.id, name: op.name, arguments: "" },
          "in_progress",
          this.options.toolNamespaces,
        );
        this.toolItems.set(op.key, { ...item, outputIndex });
        this.output.push(item);
        events.push(this.emit({ type: "response.output_item.added", output_index: outputIndex, item: structuredClone(item) }));
      } else {
        const tracked = this.toolItems.get(op.key);
        if (tracked === undefined) continue;
        if (op.kind === "arguments") {
          events.push(this.emit({ type: "response.function_call_arguments.delta", item_id: tracked.id, output_index: tracked.outputIndex, delta: op.fragment }));
        } else {
          const item = buildFunctionCallItem(tracked.id, { id: op.id, name: op.name, arguments: op.arguments }, "completed", this.options.toolNamespaces);
          this.output[tracked.outputIndex] = item;
          events.push(
            this.emit({ type: "response.function_call_arguments.done", item_id: item.id, output_index: tracked.outputIndex, name: item.name, arguments: op.arguments }),
            this.emit({ type: "response.output_item.done", output_index: tracked.outputIndex, item: structuredClone(item) }),
          );
        }
      }
    }
    return events;
  }

  private closeItems(): ResponsesStreamEvent[] {
    return [...this.closeReasoning(), ...this.closeMessage(), ...this.applyToolOps(this.tools.flush())];
  }

  private end(): ResponsesStreamEvent[] {
    this.phase = "done";
    const { status, incompleteDetails } = mapFinishReasonToStatus(this.finishReason);
    this.finalResponse = this.snapshot(status, { incompleteDetails, completedAt: this.clock() });
    const type = status === "completed" ? "response.completed" : "response.incomplete";
    return [this.emit({ type, response: this.finalResponse })];
  }

  private snapshot(
    status: ResponsesStatus,
    extra: { usage?: null; output?: ResponsesOutputItem[]; incompleteDetails?: ResponsesObject["incomplete_details"]; error?: ResponsesObject["error"]; completedAt?: number },
  ): ResponsesObject {
    return buildResponseObject(
      { id: this.id, createdAt: this.createdAt, model: this.model, request: this.options.request },
      {
        status,
        output: extra.output ?? structuredClone(this.output),
        usage: extra.usage === null ? null : convertChatUsageToResponses(this.usage),
        incompleteDetails: extra.incompleteDetails ?? null,
        error: extra.error ?? null,
        completedAt: extra.completedAt ?? null,
      },
    );
  }

  private emit(body: ResponsesStreamEventBody): ResponsesStreamEvent {
    // type and sequence_number first: easier to read in logs and goldens.
    const { type, ...rest } = body;
    return { type, sequence_number: this.sequence++, ...rest } as ResponsesStreamEvent;
  }
}

function emptyPart(kind: "text" | "refusal"): { type: "output_text"; text: string; annotations: never[] } | { type: "refusal"; refusal: string } {
  return kind === "text" ? { type: "output_text", text: "", annotations: [] } : { type: "refusal", refusal: "" };
}
