// OpenAI Responses wire types (request, response object, stream events) for the Chat bridge.
// Input is loosely typed where Codex and other clients send item kinds this bridge drops.

export interface ResponsesInputText {
  type: "input_text";
  text: string;
}

export interface ResponsesInputImage {
  type: "input_image";
  image_url?: string | null;
  file_id?: string | null;
  detail?: "low" | "high" | "auto" | "original";
}

export interface ResponsesInputFile {
  type: "input_file";
  file_id?: string | null;
  file_data?: string;
  file_url?: string;
  filename?: string;
}

export interface ResponsesOutputText {
  type: "output_text";
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

export interface ResponsesRefusal {
  type: "refusal";
  refusal: string;
}

export type ResponsesContentPart = ResponsesInputText | ResponsesInputImage | ResponsesInputFile | ResponsesOutputText | ResponsesRefusal;

export interface ResponsesMessageItem {
  type?: "message";
  id?: string;
  role: "user" | "assistant" | "system" | "developer";
  content: string | ResponsesContentPart[];
  status?: string;
  phase?: string;
}

export interface ResponsesFunctionCallItem {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  id?: string;
  namespace?: string;
  status?: "in_progress" | "completed" | "incomplete";
}

export interface ResponsesFunctionCallOutputItem {
  type: "function_call_output";
  call_id: string;
  output: string | ResponsesContentPart[];
  id?: string;
}

export type ResponsesInputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesFunctionCallOutputItem | { type: string; [key: string]: unknown };

export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export interface ResponsesNamespaceTool {
  type: "namespace";
  name: string;
  description?: string;
  tools: Array<ResponsesFunctionTool | { type: string; [key: string]: unknown }>;
}

export type ResponsesTool = ResponsesFunctionTool | ResponsesNamespaceTool | { type: string; [key: string]: unknown };

export type ResponsesToolChoice =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; name: string }
  | { type: "allowed_tools"; mode: "auto" | "required"; tools: Array<{ type: string; name?: string }> }
  | { type: string; [key: string]: unknown };

export type ResponsesTextFormat =
  { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

export interface ResponsesRequest {
  model?: string;
  input?: string | ResponsesInputItem[];
  instructions?: string | null;
  tools?: ResponsesTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  previous_response_id?: string | null;
  store?: boolean | null;
  stream?: boolean | null;
  text?: { format?: ResponsesTextFormat; verbosity?: "low" | "medium" | "high" | null } | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  include?: string[] | null;
  temperature?: number | null;
  top_p?: number | null;
  user?: string;
  metadata?: Record<string, string> | null;
  [key: string]: unknown;
}

export interface ResponsesOutputMessage {
  type: "message";
  id: string;
  role: "assistant";
  status: "in_progress" | "completed" | "incomplete";
  content: Array<ResponsesOutputText | ResponsesRefusal>;
}

export interface ResponsesOutputFunctionCall {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed" | "incomplete";
  namespace?: string;
}

export interface ResponsesSummaryText {
  type: "summary_text";
  text: string;
}

/** Anthropic thinking as a reasoning item: its text as the summary, its signed blocks in encrypted_content. */
export interface ResponsesOutputReasoning {
  type: "reasoning";
  id: string;
  summary: ResponsesSummaryText[];
  encrypted_content?: string | null;
  status?: "in_progress" | "completed" | "incomplete";
}

export type ResponsesOutputItem = ResponsesOutputMessage | ResponsesOutputFunctionCall | ResponsesOutputReasoning;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponsesStatus = "completed" | "failed" | "in_progress" | "cancelled" | "queued" | "incomplete";

export interface ResponsesObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponsesStatus;
  completed_at: number | null;
  model: string;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" | "content_filter" } | null;
  instructions: string | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  tool_choice: ResponsesToolChoice;
  tools: ResponsesTool[];
  max_output_tokens: number | null;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  text: { format: ResponsesTextFormat; verbosity?: string | null };
  truncation: "auto" | "disabled";
  user?: string;
}

interface Seq {
  sequence_number: number;
}

export type ResponsesStreamEvent = Seq &
  (
    | { type: "response.created" | "response.in_progress" | "response.completed" | "response.incomplete" | "response.failed"; response: ResponsesObject }
    | { type: "response.output_item.added" | "response.output_item.done"; output_index: number; item: ResponsesOutputItem }
    | {
        type: "response.content_part.added" | "response.content_part.done";
        item_id: string;
        output_index: number;
        content_index: number;
        part: ResponsesOutputText | ResponsesRefusal;
      }
    | { type: "response.output_text.delta"; item_id: string; output_index: number; content_index: number; delta: string; logprobs: unknown[] }
    | { type: "response.output_text.done"; item_id: string; output_index: number; content_index: number; text: string; logprobs: unknown[] }
    | { type: "response.refusal.delta"; item_id: string; output_index: number; content_index: number; delta: string }
    | { type: "response.refusal.done"; item_id: string; output_index: number; content_index: number; refusal: string }
    | { type: "response.function_call_arguments.delta"; item_id: string; output_index: number; delta: string }
    | { type: "response.function_call_arguments.done"; item_id: string; output_index: number; name: string; arguments: string }
    | {
        type: "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done";
        item_id: string;
        output_index: number;
        summary_index: number;
        part: ResponsesSummaryText;
      }
    | { type: "response.reasoning_summary_text.delta"; item_id: string; output_index: number; summary_index: number; delta: string }
    | { type: "response.reasoning_summary_text.done"; item_id: string; output_index: number; summary_index: number; text: string }
  );

/** A stream event before its sequence number is assigned. */
export type ResponsesStreamEventBody = ResponsesStreamEvent extends infer E ? (E extends Seq ? Omit<E, "sequence_number"> : never) : never;
