// Guardrails through the gateway (docs/configuration.md, "Guardrails"): every built-in pattern
// masked and blocked in every chat client format, on the request and on the answer, buffered and
// streamed with the match split across two upstream events; nothing sent or charged on a block.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { PATTERN_SAMPLES } from "../support/guardrail-samples.js";
import { FORMATS, inJson, post } from "../support/guardrail-formats.js";

const guardrailsYaml = (name: string, mode: string) => `
guardrails:
  - name: ${name}
    kind: builtin
    patterns: [secrets, personal_data]
    applies_to: [request, response]
    mode: ${mode}
`;

/** Split where a stream would cut it: after "sk-ant-" for the Anthropic key, else in the middle. */
const splitOf = (sample: string): [string, string] => {
  const at = sample.startsWith("sk-ant-") ? 7 : Math.floor(sample.length / 2);
  return [sample.slice(0, at), sample.slice(at)];
};

describe("guardrails in every client format", () => {
  let mock: MockUpstream;
  let masking: TestGateway;
  let blocking: TestGateway;
  let maskKey: string;
  let blockKey: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    masking = await startGateway(mockConfig({ openaiUrl: mock.url, extra: guardrailsYaml("secrets-mask", "mask") }));
    blocking = await startGateway(mockConfig({ openaiUrl: mock.url, extra: guardrailsYaml("no-secrets", "block") }));
    maskKey = (await masking.createAccount()).raw;
    blockKey = (await blocking.createAccount()).raw;
  });
  afterAll(async () => {
    await masking?.close();
    await blocking?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    mock.handler = (_req, res) => json(res, 200, chatCompletion("All fine."));
  });

  it("a stored Responses turn holds the masked answer, buffered and streamed", async () => {
    for (const stream of [false, true]) {
      mock.handler = (req, res) => (stream ? chatStream(req, res, ["Mail jane", ".doe@example.com now."]) : json(res, 200, chatCompletion("Mail jane.doe@example.com now.")));
      const answer = await post(masking.url, FORMATS[1]!, maskKey, "hello", stream);
      const id = /"id":"(resp_[^"]+)"/.exec(answer.text)![1]!;
      const stored = await (await fetch(`${masking.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${maskKey}` } })).text();
      expect(stored).toContain("Mail [REDACTED:email] now.");
      expect(stored).not.toContain("jane.doe@example.com");
    }
  });

  describe.each(FORMATS)("$name", (format) => {
    it.each(PATTERN_SAMPLES)("request: $id masked before it leaves", async ({ id, sample }) => {
      const answer = await post(masking.url, format, maskKey, `My data: ${sample} please.`, false);
      expect(answer.status).toBe(200);
      const sent = JSON.stringify(mock.requests[0]!.body);
      expect(sent).toContain(`My data: [REDACTED:${id}] please.`);
      expect(sent).not.toContain(inJson(sample));
    });

    it.each(PATTERN_SAMPLES)("request: $id blocked, nothing sent, guardrail named", async ({ sample }) => {
      const answer = await post(blocking.url, format, blockKey, `My data: ${sample} please.`, false);
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(/guardrail_blocked|GUARDRAIL_BLOCKED/);
      expect(answer.text).toContain('guardrail \\"no-secrets\\"');
      expect(answer.text).not.toContain(inJson(sample));
      expect(mock.requests).toHaveLength(0);
    });

    it.each(PATTERN_SAMPLES)("buffered answer: $id masked", async ({ id, sample }) => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion(`Here: ${sample} done.`));
      const answer = await post(masking.url, format, maskKey, "hello", false);
      expect(answer.status).toBe(200);
      expect(answer.text).toContain(`Here: [REDACTED:${id}] done.`);
      expect(answer.text).not.toContain(inJson(sample));
    });

    it.each(PATTERN_SAMPLES)("buffered answer: $id blocked with a 400", async ({ sample }) => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion(`Here: ${sample} done.`));
      const answer = await post(blocking.url, format, blockKey, "hello", false);
      expect(answer.status).toBe(400);
      expect(answer.text).toContain("was blocked by guardrail");
      expect(answer.text).not.toContain(inJson(sample));
    });

    it.each(PATTERN_SAMPLES)("streamed answer: $id split across events, masked", async ({ id, sample }) => {
      const [head, tail] = splitOf(sample);
      mock.handler = (req, res) => chatStream(req, res, [`Here: ${head}`, `${tail} done.`]);
      const answer = await post(masking.url, format, maskKey, "hello", true);
      expect(answer.status).toBe(200);
      expect(answer.text).toContain(`[REDACTED:${id}]`);
      expect(answer.text).not.toContain(inJson(tail));
      expect(answer.text).not.toContain(inJson(sample));
    });

    it.each(PATTERN_SAMPLES)("streamed answer: $id split across events, blocked", async ({ sample }) => {
      const [head, tail] = splitOf(sample);
      mock.handler = (req, res) => chatStream(req, res, [...Array<string>(30).fill("Hello there. "), `Here: ${head}`, `${tail} done.`]);
      const answer = await post(blocking.url, format, blockKey, "hello", true);
      // The first pieces left once 256 characters followed them (the holdback window), before the
      // key arrived: the stream ends with the format's error event.
      expect(answer.status).toBe(200);
      expect(answer.text).toContain("Hello there.");
      expect(answer.text).toMatch(/guardrail_blocked|GUARDRAIL_BLOCKED/);
      expect(answer.text).not.toContain(inJson(head));
      expect(answer.text).not.toContain(inJson(tail));
    });
  });
});
