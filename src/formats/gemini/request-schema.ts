// The Gemini request bodies as far as the gateway itself reads them before planning (the rest is
// checked by the translator, or passes to a Gemini-native upstream untouched): describe() checks a
// body with these, and the OpenAPI document describes the bodies from them.
import { z } from "zod";

const positiveInt = (field: string) =>
  z
    .number({ error: `${field} must be a positive integer.` })
    .min(1, `${field} must be a positive integer.`)
    .refine(Number.isInteger, `${field} must be a positive integer.`)
    .meta({ type: "integer" })
    .nullable()
    .optional();

const content = z.looseObject(
  {
    role: z.enum(["user", "model", "function"], { error: "must be user or model." }).optional(),
    parts: z.array(z.looseObject({}, { error: "each part must be an object." }), { error: "parts must be an array." }),
  },
  { error: "each content must be an object with parts." },
);

/** POST /v1beta/models/{model}:generateContent and :streamGenerateContent. */
export const geminiRequestSchema = z.looseObject({
  contents: z.array(content, { error: "contents must be a non-empty array." }).min(1, "contents must be a non-empty array."),
  systemInstruction: z.union([z.string(), z.looseObject({ parts: z.array(z.looseObject({})) })], { error: "systemInstruction must be a Content." }).optional(),
  generationConfig: z.looseObject({ maxOutputTokens: positiveInt("generationConfig.maxOutputTokens") }, { error: "generationConfig must be an object." }).optional(),
  tools: z.array(z.looseObject({}), { error: "tools must be an array." }).optional(),
});

/** POST /v1beta/models/{model}:countTokens: contents, or a whole generateContentRequest. */
export const geminiCountTokensRequestSchema = z.looseObject({
  contents: z.array(content, { error: "contents must be an array." }).optional(),
  generateContentRequest: z
    .looseObject({ contents: z.array(content, { error: "contents must be an array." }).optional() }, { error: "generateContentRequest must be an object." })
    .optional(),
});
