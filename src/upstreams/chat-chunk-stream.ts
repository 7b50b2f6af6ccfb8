// What every decoder of an upstream stream into Chat chunks shares: one id, created time and model on
// every chunk, the assistant role chunk before anything else, and one ending: a finish_reason chunk
// then a usage chunk (choices: []) that the Chat plan forwards only when the client asked for
// include_usage, or the in-band error. Nothing is emitted after the ending.
import type { ChatChunkDelta, ChatCompletionChunk, ChatFinishReason, ChatStreamError, ChatUsage } from "../wire/chat/types.js";
import { deriveId, nowSeconds } from "../wire/shared/ids.js";

export type ChatStreamItem = ChatCompletionChunk | ChatStreamError;

export interface ChatChunkIdentity {
  /** Chat id for every chunk; random when absent (unless the decoder takes one from the upstream). */
  id?: string;
  /** Unix seconds for every chunk; now when absent. */
  created?: number;
}

export abstract class ChatChunkStream<Event> {
  /** Unset until a decoder takes the upstream's id, or the first chunk is made (random then). */
  protected id: string | undefined;
  protected model: string;
  private readonly created: number;
  #started = false;
  #ended = false;

  protected constructor(identity: ChatChunkIdentity, model: string) {
    this.id = identity.id;
    this.model = model;
    this.created = identity.created ?? nowSeconds();
  }

  /** One upstream event in, the Chat chunks (or the in-band error) it makes. */
  abstract push(event: Event): ChatStreamItem[];

  /** How the stream ended, asked once when it does: the finish reason and the usage. */
  protected abstract ending(): { finishReason: ChatFinishReason; usage: ChatUsage };

  /** End of the upstream stream: the finish chunk and the usage chunk, if not yet sent. */
  finish(): ChatStreamItem[] {
    if (this.#ended) return [];
    const out: ChatStreamItem[] = this.start();
    this.#ended = true;
    const { finishReason, usage } = this.ending();
    out.push({ ...this.chunk({}), choices: [{ index: 0, delta: {}, finish_reason: finishReason, logprobs: null }] });
    out.push({ ...this.chunk({}), choices: [], usage });
    return out;
  }

  /** Upstream failed mid-stream: the Chat in-band error payload. */
  abort(message: string, type = "provider_error"): ChatStreamItem[] {
    return this.fail({ message, type, param: null, code: null });
  }

  /** The stream has ended (finished or failed): events are ignored. */
  protected get ended(): boolean {
    return this.#ended;
  }

  /** The in-band error, which ends the stream. */
  protected fail(error: ChatStreamError["error"]): ChatStreamItem[] {
    if (this.#ended) return [];
    this.#ended = true;
    return [{ error }];
  }

  /** The assistant role chunk, before the stream's first chunk only. */
  protected start(): ChatCompletionChunk[] {
    if (this.#started) return [];
    this.#started = true;
    return [this.chunk({ role: "assistant", content: "" })];
  }

  protected chunk(delta: ChatChunkDelta): ChatCompletionChunk {
    this.id ??= deriveId(undefined, [], "chatcmpl-");
    return { id: this.id, object: "chat.completion.chunk", created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] };
  }
}
