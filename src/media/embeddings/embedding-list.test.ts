import { describe, expect, it } from "vitest";
import { embeddingList, float32Base64 } from "./embedding-list.js";

describe("embeddingList", () => {
  it("encodes vectors as OpenAI does for base64: little-endian float32", () => {
    const vector = [0.5, -1, 3.25];
    const bytes = Buffer.from(float32Base64(vector), "base64");
    expect([0, 1, 2].map((i) => bytes.readFloatLE(i * 4))).toEqual(vector);
    expect(float32Base64([1])).toBe("AACAPw=="); // 1.0f = 0x3f800000, little-endian
  });

  it("builds the list in the encoding asked, with the client's model and the input tokens", () => {
    expect(embeddingList([[1], [2]], "float", "embed", 7)).toEqual({
      object: "list",
      data: [
        { object: "embedding", index: 0, embedding: [1] },
        { object: "embedding", index: 1, embedding: [2] },
      ],
      model: "embed",
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    expect(embeddingList([[1]], "base64", "embed", 7).data[0]!.embedding).toBe("AACAPw==");
  });
});
