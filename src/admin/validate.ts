// Request parsing for dashboard routes: zod schemas, with the first problem reported as
// 400 invalid_request naming the field, and money accepted as a decimal string or number.
import { z } from "zod";
import { parseUsd, type Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, where = "body"): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const param = issue.path.length ? issue.path.map(String).join(".") : where;
  throw new GatewayError("invalid_request", `${param}: ${issue.message}`, { param });
}

/** A non-negative USD amount ("12.50" or 12.5); null clears a cap. */
export const usdAmount = z.union([z.string(), z.number()]).transform((value, ctx): Nano => {
  const nano = parseUsd(value);
  if (nano === null || nano < 0n) {
    ctx.addIssue({ code: "custom", message: 'must be a non-negative decimal amount in USD, e.g. "10.00"' });
    return z.NEVER;
  }
  return nano;
});

export const tokenCount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/, "must be an email address");

export const password = z.string().min(8, "must be at least 8 characters").max(200);

/** Path ids are opaque; anything very long is simply not one of ours. */
export const idParam = z.string().min(1).max(100);

/** `?confirm=true` must be spelled out for destructive key routes; `permanent=true` deletes instead of revoking. */
export const confirmQuery = z.object({
  confirm: z.literal("true", { error: "Add ?confirm=true to confirm this destructive action." }),
  permanent: z.enum(["true", "false"], { error: "permanent must be true or false" }).optional(),
});

export function requireConfirm(query: Record<string, unknown>): { permanent: boolean } {
  const result = confirmQuery.safeParse({ confirm: query.confirm, permanent: query.permanent });
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new GatewayError("invalid_request", issue.message, { param: String(issue.path[0] ?? "confirm") });
  }
  return { permanent: result.data.permanent === "true" };
}
