// Clamping (docs/billing.md, "Clamping"): a request whose limits cover its prompt and at least
// billing.clamp.min_output_tokens is admitted with its output limit lowered to what they cover, sent
// upstream in the route's own field and named in x-gateway-max-tokens-clamped; the client sees the
// format's length stop; below the minimum, or with clamping turned off, 402 as before.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { estimateTextTokens } from "../../src/billing/estimate-tokens.js";
import { parseUsd } from "../../src/core/money.js";
import { estimateMessagesPromptTokens } from "../../src/formats/messages/messages-over-chat.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { BIG_MODELS, MIN_OUTPUT_TOKENS } from "../support/clamping-models.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { json, startMockUpstream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";

// Both $3 input and $15 output per million tokens: in nano-USD per token, 3,000 and 15,000.
const INPUT_NANO_PER_TOKEN = 3_000n;
const OUTPUT_NANO_PER_TOKEN = 15_000n;

/** The output tokens `room` nano-USD covers after a prompt of `promptTokens`, by hand: floor((room - input cost) / output price). */
function coveredByHand(room: bigint, promptTokens: number, outputNanoPerToken = OUTPUT_NANO_PER_TOKEN): number {
  return Number((room - BigInt(promptTokens) * INPUT_NANO_PER_TOKEN) / outputNanoPerToken);
}

/** What `promptTokens` in and `outputTokens` out cost at $3 / $15 per million, by hand. */
function costByHand(promptTokens: number, outputTokens: number): bigint {
  return BigInt(promptTokens) * INPUT_NANO_PER_TOKEN + BigInt(outputTokens) * OUTPUT_NANO_PER_TOKEN;
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
      message: {
        id: "msg_clamp",
        type: "message",
        role: "assistant",
        model: "claude-big",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: HI_PROMPT_TOKENS, output_tokens: 1 },
      },
    });
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: "w ".repeat(count) } });
    send("content_block_stop", { index: 0 });
    send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: count } });
    send("message_stop", {});
    res.end();
  };
}

/** An OpenAI-compatible upstream that ignores max_tokens: 3,000 chunks of "word " (1.25 tokens each, estimated). */
async function overshootingStream(req: RecordedRequest, res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { id: "chatcmpl-over", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-big" };
  for (let i = 0; i < 3_000 && !res.destroyed; i++) {
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: "word " }, finish_reason: null }] })}\n\n`);
    if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  if (res.destroyed) return;
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
  if (req.body.stream_options?.include_usage)
    res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 3000, total_tokens: 3005 } })}\n\n`);
  res.end("data: [DONE]\n\n");
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
        // An explicit timeout: without it the SDK refuses a buffered max_tokens of 32,000 itself.
        anthropic: new Anthropic({ apiKey: created.raw, baseURL: gateway.url, maxRetries: 0, timeout: 60_000 }),
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
      expect(parseUsd("0.05")! - after.balance).toBe(costByHand(HI_PROMPT_TOKENS, expected));
    });

    it("clamps a streamed Chat request in the field the client used (max_completion_tokens, SDK)", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const user = await accountHolding("0.05");
      const expected = coveredByHand(parseUsd("0.05")!, HI_PROMPT_TOKENS);
      const { data: stream, response } = await user.openai.chat.completions
        .create({ model: "big-gpt", max_completion_tokens: 32_000, stream: true, messages: [{ role: "user", content: "Hi" }] })
        .withResponse();
      const finishes: Array<string | null> = [];
      for await (const chunk of stream) for (const choice of chunk.choices) finishes.push(choice.finish_reason);
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests[0]!.body.max_completion_tokens).toBe(expected);
      expect(mock.requests[0]!.body.max_tokens).toBeUndefined();
      expect(finishes.filter((f) => f !== null)).toEqual(["length"]);
      const after = await user.balance();
      expect(after.held).toBe(0n);
      expect(parseUsd("0.05")! - after.balance).toBe(costByHand(HI_PROMPT_TOKENS, expected));
    });

    it("clamps a request that set no limit (the model's default output tokens) the same way", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const user = await accountHolding("0.05");
      const expected = coveredByHand(parseUsd("0.05")!, HI_PROMPT_TOKENS);
      const { data, response } = await user.openai.chat.completions.create({ model: "big-gpt", messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests[0]!.body.max_tokens).toBe(expected);
      expect(data.choices[0]!.finish_reason).toBe("length");
    });

    it("leaves a request its limits cover alone: no header, the limit as sent", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const user = await accountHolding("5");
      const { response } = await user.openai.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBeNull();
      expect(mock.requests[0]!.body.max_tokens).toBe(32_000);
    });

    it("clamps Responses requests, buffered and streamed (SDK): max_output_tokens lowered, status incomplete", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const prompt = estimateTextTokens(JSON.stringify(["", "Hi", []]));
      const expected = coveredByHand(parseUsd("0.05")!, prompt);

      const buffered = await accountHolding("0.05");
      const { data, response } = await buffered.openai.responses.create({ model: "big-gpt", input: "Hi", max_output_tokens: 32_000, store: false }).withResponse();
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests.at(-1)!.body.max_tokens).toBe(expected);
      expect(data.status).toBe("incomplete");
      expect(data.incomplete_details).toEqual({ reason: "max_output_tokens" });

      const streamed = await accountHolding("0.05");
      const { data: stream, response: streamResponse } = await streamed.openai.responses
        .create({ model: "big-gpt", input: "Hi", max_output_tokens: 32_000, stream: true, store: false })
        .withResponse();
      const types: string[] = [];
      let final: { status?: string; incomplete_details?: unknown } | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.incomplete") final = event.response;
      }
      expect(streamResponse.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests.at(-1)!.body.max_tokens).toBe(expected);
      expect(types.at(-1)).toBe("response.incomplete");
      expect(final).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
      for (const user of [buffered, streamed]) expect((await user.balance()).balance >= 0n).toBe(true);
    });

    it("clamps Messages requests on an Anthropic-native upstream, buffered and streamed (SDK): stop_reason max_tokens", async () => {
      mock.handler = messagesHonouringLimit(40_000);
      const body = { max_tokens: 32_000, messages: [{ role: "user" as const, content: "Hi" }] };
      const expected = coveredByHand(parseUsd("0.05")!, estimateMessagesPromptTokens(body));

      const buffered = await accountHolding("0.05");
      const { data, response } = await buffered.anthropic.messages.create({ model: "big-claude", ...body }).withResponse();
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests.at(-1)!.body.max_tokens).toBe(expected);
      expect(data.stop_reason).toBe("max_tokens");

      const streamed = await accountHolding("0.05");
      const { data: stream, response: streamResponse } = await streamed.anthropic.messages.create({ model: "big-claude", ...body, stream: true }).withResponse();
      let stop: string | null = null;
      for await (const event of stream) if (event.type === "message_delta") stop = event.delta.stop_reason;
      expect(streamResponse.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests.at(-1)!.body.max_tokens).toBe(expected);
      expect(stop).toBe("max_tokens");
      for (const user of [buffered, streamed]) {
        const after = await user.balance();
        expect(after.held).toBe(0n);
        expect(parseUsd("0.05")! - after.balance).toBe(costByHand(HI_PROMPT_TOKENS, expected));
      }
    });

    it("refuses with 402 as before when the limits cover less than the minimum output", async () => {
      mock.handler = chatHonouringLimit(40_000);
      // Covers the prompt and MIN_OUTPUT_TOKENS - 1 output tokens.
      const balance = costByHand(HI_PROMPT_TOKENS, MIN_OUTPUT_TOKENS - 1);
      const user = await accountHolding("0");
      await gateway.app.ctx.store.accounts.adjustBalance(user.account.id, balance);
      const error = await user.openai.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
      expect((error as InstanceType<typeof OpenAI.APIError>).type).toBe("quota_exceeded");
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("insufficient_balance");
      expect(mock.requests).toHaveLength(0);
      // One more token's worth and the same request is admitted with exactly the minimum.
      await gateway.app.ctx.store.accounts.adjustBalance(user.account.id, OUTPUT_NANO_PER_TOKEN);
      const { response } = await user.openai.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(MIN_OUTPUT_TOKENS));
    });

    it("refuses with 402 as before when the account or the key turned clamping off", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const ask = (client: OpenAI) =>
        client.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).catch((e: unknown) => e);

      const accountOff = await accountHolding("0.05");
      await gateway.app.ctx.store.accounts.update(accountOff.account.id, { clampOutput: false });
      expect(await ask(accountOff.openai)).toMatchObject({ status: 402, type: "quota_exceeded" });

      const keyOff = await accountHolding("0.05");
      await gateway.app.ctx.store.keys.setClampOutput(keyOff.key.id, false);
      expect(await ask(keyOff.openai)).toMatchObject({ status: 402, type: "quota_exceeded" });
      expect(mock.requests).toHaveLength(0);

      // Turned on again, the same requests are clamped.
      await gateway.app.ctx.store.accounts.update(accountOff.account.id, { clampOutput: true });
      await gateway.app.ctx.store.keys.setClampOutput(keyOff.key.id, true);
      for (const user of [accountOff, keyOff]) {
        const { response } = await user.openai.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
        expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(coveredByHand(parseUsd("0.05")!, HI_PROMPT_TOKENS)));
      }
    });

    it("clamps to the key budget cap, the key token cap and the monthly budgets too", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const ask = async (client: OpenAI) => {
        const { data, response } = await client.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
        expect(data.choices[0]!.finish_reason).toBe("length");
        return Number(response.headers.get("x-gateway-max-tokens-clamped"));
      };
      const cases: Array<{ name: string; options: NonNullable<Parameters<TestGateway["createAccount"]>[0]>; expected: number }> = [
        { name: "key budget cap", options: { budgetCap: "0.02" }, expected: coveredByHand(parseUsd("0.02")!, HI_PROMPT_TOKENS) },
        { name: "key token cap", options: { tokenCap: 1_000 }, expected: 1_000 - HI_PROMPT_TOKENS },
        { name: "monthly budget", options: { monthlyBudget: "0.03" }, expected: coveredByHand(parseUsd("0.03")!, HI_PROMPT_TOKENS) },
        { name: "monthly token budget", options: { monthlyTokenBudget: 2_000 }, expected: 2_000 - HI_PROMPT_TOKENS },
        // Several limits: the tightest one decides.
        { name: "balance and key cap", options: { budgetCap: "0.04", tokenCap: 50_000 }, expected: coveredByHand(parseUsd("0.04")!, HI_PROMPT_TOKENS) },
      ];
      for (const { name, options, expected } of cases) {
        const user = await accountHolding("5", options);
        expect({ name, clamped: await ask(user.openai) }).toEqual({ name, clamped: expected });
        expect(mock.requests.at(-1)!.body.max_tokens).toBe(expected);
        const key = (await gateway.app.ctx.store.keys.get(user.key.id))!;
        if (options.budgetCap) expect(key.spent <= parseUsd(options.budgetCap)!).toBe(true);
        if (options.tokenCap) expect(key.tokensUsed).toBeLessThanOrEqual(options.tokenCap);
      }
    });

    it("clamps a routing group for its dearest deployment, whichever serves", async () => {
      mock.handler = chatHonouringLimit(40_000);
      const user = await accountHolding("0.05");
      // The dearest deployment ("dear") prices output at $30 per million: 30,000 nano a token.
      const expected = coveredByHand(parseUsd("0.05")!, HI_PROMPT_TOKENS, 30_000n);
      const { data, response } = await user.openai.chat.completions.create({ model: "big-routed", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(response.headers.get("x-gateway-deployment")).toBe("cheap");
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe(String(expected));
      expect(mock.requests.at(-1)!.body).toMatchObject({ model: "up-cheap", max_tokens: expected });
      expect(data.choices[0]!.finish_reason).toBe("length");
      // Charged at the serving deployment's price.
      const after = await user.balance();
      expect(parseUsd("0.05")! - after.balance).toBe(costByHand(HI_PROMPT_TOKENS, expected));
    });

    it("stops relaying a clamped stream at the limit when the upstream overshoots it, and charges no more than the hold", async () => {
      mock.handler = overshootingStream;
      const start = costByHand(HI_PROMPT_TOKENS, 300);
      const user = await accountHolding("0");
      await gateway.app.ctx.store.accounts.adjustBalance(user.account.id, start);
      const { data: stream, response } = await user.openai.chat.completions
        .create({ model: "big-gpt", max_tokens: 32_000, stream: true, messages: [{ role: "user", content: "Hi" }] })
        .withResponse();
      let text = "";
      const finishes: Array<string | null> = [];
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          text += choice.delta.content ?? "";
          finishes.push(choice.finish_reason);
        }
      }
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe("300");
      expect(finishes.filter((f) => f !== null)).toEqual(["length"]);
      // Relayed up to the limit (the chunk that reached it included), not the 3,000 chunks sent.
      expect(estimateTextTokens(text)).toBeGreaterThanOrEqual(300);
      expect(estimateTextTokens(text)).toBeLessThan(300 + 2);
      const after = await user.balance();
      expect(after.balance >= 0n).toBe(true);
      expect(after.held).toBe(0n);
      // The upstream was dropped at the limit, not read to its end.
      await expect.poll(() => mock.requests.at(-1)!.aborted).toBe(true);
      const row = await gateway.app.ctx.store.db
        .selectFrom("ledger")
        .select(["cost_nano", "output_tokens", "estimated"])
        .where("account_id", "=", user.account.id)
        .where("kind", "=", "usage")
        .executeTakeFirstOrThrow();
      expect(BigInt(row.cost_nano) <= start).toBe(true);
      expect(Number(row.output_tokens)).toBeLessThan(300 + 2);
    });

    it("stops an overshooting upstream at the limit for Messages and Responses clients too (SDK streams)", async () => {
      mock.handler = overshootingStream;
      const messagesBody = { max_tokens: 32_000, messages: [{ role: "user" as const, content: "Hi" }] };
      const messagesUser = await accountHolding("0");
      const messagesStart = costByHand(estimateMessagesPromptTokens(messagesBody), 300);
      await gateway.app.ctx.store.accounts.adjustBalance(messagesUser.account.id, messagesStart);
      const { data: messages, response: messagesResponse } = await messagesUser.anthropic.messages.create({ model: "big-gpt", ...messagesBody, stream: true }).withResponse();
      let text = "";
      let stop: string | null = null;
      const types: string[] = [];
      for await (const event of messages) {
        types.push(event.type);
        if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
        if (event.type === "message_delta") stop = event.delta.stop_reason;
      }
      expect(messagesResponse.headers.get("x-gateway-max-tokens-clamped")).toBe("300");
      expect(stop).toBe("max_tokens");
      expect(types.at(-1)).toBe("message_stop");
      expect(estimateTextTokens(text)).toBeLessThan(300 + 2);
      expect((await messagesUser.balance()).balance >= 0n).toBe(true);

      const responsesUser = await accountHolding("0");
      const responsesStart = costByHand(estimateTextTokens(JSON.stringify(["", "Hi", []])), 300);
      await gateway.app.ctx.store.accounts.adjustBalance(responsesUser.account.id, responsesStart);
      const { data: responses, response: responsesResponse } = await responsesUser.openai.responses
        .create({ model: "big-gpt", input: "Hi", max_output_tokens: 32_000, stream: true, store: false })
        .withResponse();
      let final: { status?: string; incomplete_details?: unknown } | undefined;
      for await (const event of responses) if (event.type === "response.incomplete") final = event.response;
      expect(responsesResponse.headers.get("x-gateway-max-tokens-clamped")).toBe("300");
      expect(final).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
      expect((await responsesUser.balance()).balance >= 0n).toBe(true);
    });

    it("a clamped request the upstream fails: 502 without the header, nothing charged, nothing held", async () => {
      mock.handler = (_req, res) => json(res, 500, { error: { message: "boom" } });
      const user = await accountHolding("0.05");
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${user.raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(response.status).toBe(502);
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBeNull();
      expect(mock.requests.at(-1)!.body.max_tokens).toBe(coveredByHand(parseUsd("0.05")!, HI_PROMPT_TOKENS));
      const after = await user.balance();
      expect([after.balance, after.held]).toEqual([parseUsd("0.05")!, 0n]);
    });

    it("charges a buffered answer over the clamped limit no more than the hold", async () => {
      // Ignores max_tokens and reports 5,000 output tokens.
      mock.handler = (_req, res) =>
        json(res, 200, {
          id: "chatcmpl-over",
          object: "chat.completion",
          created: 1_700_000_000,
          model: "upstream-big",
          choices: [{ index: 0, message: { role: "assistant", content: "w ".repeat(5_000) }, finish_reason: "stop", logprobs: null }],
          usage: { prompt_tokens: HI_PROMPT_TOKENS, completion_tokens: 5_000, total_tokens: HI_PROMPT_TOKENS + 5_000 },
        });
      const start = costByHand(HI_PROMPT_TOKENS, 300);
      const user = await accountHolding("0");
      await gateway.app.ctx.store.accounts.adjustBalance(user.account.id, start);
      const { response } = await user.openai.chat.completions.create({ model: "big-gpt", max_tokens: 32_000, messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(response.headers.get("x-gateway-max-tokens-clamped")).toBe("300");
      const after = await user.balance();
      // The hold was the whole balance: charged exactly that, never the 5,000 tokens' price.
      expect(after.balance).toBe(0n);
      expect(after.held).toBe(0n);
      const row = await gateway.app.ctx.store.db
        .selectFrom("ledger")
        .select(["cost_nano", "output_tokens", "note"])
        .where("account_id", "=", user.account.id)
        .where("kind", "=", "usage")
        .executeTakeFirstOrThrow();
      expect(BigInt(row.cost_nano)).toBe(start);
      expect(Number(row.output_tokens)).toBe(5_000);
      expect(row.note).toBeNull();
    });
  });
}
