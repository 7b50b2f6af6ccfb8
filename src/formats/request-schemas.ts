// The request bodies of the /v1 model routes, as far as the gateway itself reads them: each format's
// describe() checks a body with its schema (checkRequestBody), and the OpenAPI document
// (src/openapi) describes the body from the same schema. Everything else in a body belongs to the
// upstream's wire format and passes through untouched (loose objects).
import { z } from "zod";

const model = z.string({ error: "model is required and must be a string." }).refine((text) => text.trim() !== "", "model is required and must be a string.");
const stream = z.boolean({ error: "stream must be true or false." }).nullable().optional();
// Any integer from 1 up: not zod's .int(), which stops at 2^53 and would refuse 1e30 with the wrong
// reason; the model's own limit bounds these once the model is known (checkOutputTokenLimits).
const positiveInt = (field: string) =>
  z
    .number({ error: `${field} must be a positive integer.` })
    .min(1, `${field} must be a positive integer.`)
    .refine(Number.isInteger, `${field} must be a positive integer.`)
    .meta({ type: "integer" })
    .nullable()
    .optional();

// Roles and content part types are checked here, before anything is held: a pass-through upstream
// might accept one the format does not have (role "robot"), and the request would be billed.
const CHAT_ROLES = ["system", "developer", "user", "assistant", "tool", "function"] as const;
const CHAT_PART_TYPES = ["text", "image_url", "input_audio", "file", "refusal"] as const;
const chatMessage = z
  .looseObject(
    {
      role: z.enum(CHAT_ROLES, { error: `must be one of ${CHAT_ROLES.join(", ")}.` }),
      content: z.unknown().optional(),
    },
    { error: "each message must be an object with a role." },
  )
  .superRefine(({ content }, ctx) => {
    if (content === undefined || content === null || typeof content === "string") return;
    if (!Array.isArray(content)) {
      ctx.addIssue({ code: "custom", path: ["content"], message: "must be a string, null or an array of content parts." });
      return;
    }
    content.forEach((part: unknown, index) => {
      const type = typeof part === "object" && part !== null ? (part as { type?: unknown }).type : undefined;
      if (!(CHAT_PART_TYPES as readonly unknown[]).includes(type)) {
        ctx.addIssue({ code: "custom", path: ["content", index, "type"], message: `must be one of ${CHAT_PART_TYPES.join(", ")}.` });
      }
    });
  });

/** POST /v1/chat/completions (OpenAI Chat Completions). */
export const chatRequestSchema = z.looseObject({
  model,
  messages: z
    .array(chatMessage, {
      error: "messages must be a non-empty array.",
    })
    .min(1, "messages must be a non-empty array."),
  stream,
  max_completion_tokens: positiveInt("max_completion_tokens"),
  max_tokens: positiveInt("max_tokens"),
});

/** POST /v1/messages (Anthropic Messages). */
export const messagesRequestSchema = z.looseObject({
  model,
  messages: z.array(
    // "system" turns: Claude Code sends them, and the bridge reads them as the system prompt.
    z.looseObject(
      { role: z.enum(["user", "assistant", "system"], { error: 'must be "user", "assistant" or "system".' }) },
      { error: "each message must be an object with a role." },
    ),
    { error: "messages must be an array." },
  ),
  stream,
  max_tokens: positiveInt("max_tokens"),
});

/** POST /v1/messages/count_tokens: the Messages body without max_tokens; nothing else is read. */
export const countTokensRequestSchema = z.looseObject({ model });

/** POST /v1/responses (OpenAI Responses). */
export const responsesRequestSchema = z.looseObject({
  model,
  stream,
  max_output_tokens: positiveInt("max_output_tokens"),
});
