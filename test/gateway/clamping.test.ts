// Clamping (docs/billing.md, "Clamping"): a request whose limits cover its prompt and at least
// billing.clamp.min_output_tokens is admitted with its output limit lowered to what they cover, sent
// upstream in the route's own field and named in x-gateway-max-tokens-clamped; the client sees the
// format's length stop; below the minimum, or with clamping turned off, 402 as before.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseUsd } from "../../src/core/money.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { json, startMockUpstream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";

// Both $3 input and $15 output per million tokens: in nano-USD per token, 3,000 and 15,000.
const INPUT_NANO_PER_TOKEN = 3_000n;
const OUTPUT_NANO_PER_TOKEN = 15_000n;
const MIN_OUTPUT_TOKENS = 100;

export const BIG_MODELS = `
  - id: big-gpt
    kind: chat
    provider: mockai
    upstream_model: upstream-big
    max_output_tokens: 64000
    default_output_tokens: 32000
    pricing: { input_per_mtok: "3.00", output_per_mtok: "15.00" }
  - id: big-claude
    kind: chat
    provider: mockanthropic
    upstream_model: claude-big
    max_output_tokens: 64000
    default_output_tokens: 32000
    pricing: { input_per_mtok: "3.00", output_per_mtok: "15.00" }
billing:
  clamp:
    min_output_tokens: ${MIN_OUTPUT_TOKENS}
`;

/** The output tokens `room` nano-USD covers after a prompt of `promptTokens`, by hand: floor((room - input cost) / output price). */
function coveredByHand(room: bigint, promptTokens: number): number {
  return Number((room - BigInt(promptTokens) * INPUT_NANO_PER_TOKEN) / OUTPUT_NANO_PER_TOKEN);
}

/** The prompt estimate of one user message "Hi" (4 tokens of framing + 1 of text; estimate-tokens.ts). */
const HI_PROMPT_TOKENS = 5;

/** An OpenAI-compatible upstream that honours its limit: `words` words of output, cut at max_tokens with finish_reason "length". */
function chatHonouringLimit(words: number) {
  return async (req: RecordedRequest, res: ServerResponse) => {
    const limit = (req.body.max_completion_tokens ?? req.body.max_tokens ?? Infinity) as number;
    const count = Math.min(words, limit);
    const finish = count < words ? "length" : "stop";
    const usage = { prompt_tokens: HI_PROMPT_TOKENS, completion_tokens: count, total_tokens: HI_PROMPT_TOKENS + count };
    if (!req.body.stream) {
      json(res, 200, {
        id: "chatcmpl-clamp",
        object: "chat.completion",
        created: 1_700_000_000,
        model: "upstream-big",
        choices: [{ index: 0, message: { role: "assistant", content: "w ".repeat(count) }, finish_reason: finish, logprobs: null }],
        usage,
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const base = { id: "chatcmpl-clamp", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-big" };
    const send = (obj: object) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    send({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
    send({ ...base, choices: [{ index: 0, delta: { content: "w ".repeat(count) }, finish_reason: null }] });
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (req.body.stream_options?.include_usage) send({ ...base, choices: [], usage });
    res.end("data: [DONE]\n\n");
  };
}

/** An Anthropic-native upstream that honours max_tokens the same way (stop_reason "max_tokens"). */
function messagesHonouringLimit(words: number) {
  return async (req: RecordedRequest, res: ServerResponse) => {
    const limit = req.body.max_tokens as number;
    const count = Math.min(words, limit);
    const stop = count < words ? "max_tokens" : "end_turn";
    if (!req.body.stream) {
      json(res, 200, {
        id: "msg_clamp",
        type: "message",
        role: "assistant",
        model: "claude-big",
        content: [{ type: "text", text: "w ".repeat(count) }],
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: HI_PROMPT_TOKENS, output_tokens: count },
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send("message_start", {
      message: { id: "msg_clamp", type: "message", role: "assistant", model: "claude-big", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: HI_PROMPT_TOKENS, output_tokens: 1 } },
    });
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: "w ".repeat(count) } });
    send("content_block_stop", { index: 0 });
    send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: count } });
    send("message_stop", {});
    res.end();
  };
}

for (const kind of DATABASE_KINDS) {
  describe(`clamping on ${kind}`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: BIG_MODELS }), { kind });
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });
    beforeEach(() => {
      mock.requests.length = 0;
    });

    async function accountHolding(balance: string, options: Parameters<TestGateway["createAccount"]>[0] = {}) {
      const created = await gateway.createAccount({ balance, tier: "premium", ...options });
      return {
        ...created,
        openai: new OpenAI({ apiKey: created.raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 }),
        anthropic: new Anthropic({ apiKey: created.raw, baseURL: gateway.url, maxRetries: 0 }),
        balance: async () => (await gateway.app.ctx.store.accounts.get(created.account.id))!,
      };
    }

    it("admits $0.05 asking for 32,000 output tokens with the limit the balance covers (Chat, buffered, SDK)", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const user = await accountHolding("0.05");
      const expected = coveredByHand(parseUsd("0.05")!, HI_PROMPT_TOKENS);
      const { data, response } = await user.openai.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(response.status).toBe(200);
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests[0]!.body.max_tokens).toBe(expected);
      expect(data.choices[0]!.finish_reason).toBe("length");
      const after = await user.balance();
      expect(after.balance >= 0n).toBe(true);
      expect(after.held).toBe(0n);
      expect(parseUsd("0.05")! - after.balance).toBe(BigInt(HI_PROMPT_TOKENS) * INPUT_NANO_PER_TOKEN + BigInt(expected) * OUTPUT_NANO_PER_TOKEN);
    });
  });
}
