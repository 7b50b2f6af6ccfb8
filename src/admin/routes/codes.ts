// /admin/v1/codes: mint redemption codes (shown once in the response, stored hashed), list them
// (newest first, by batch or state) and revoke an unused one (docs/billing.md, "Redemption codes").
// Minting takes no Idempotency-Key: the replay would have to keep the raw codes, which are never stored.
import { z } from "zod";
import { MAX_BALANCE } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import { parseWith } from "../validate.js";
import type { AuditActor } from "../../store/audit-store.js";
import type { Store } from "../../store/index.js";
import { MAX_CODES_PER_MINT, REDEMPTION_CODE_STATES, type RedemptionCodeState } from "../../store/redemption-codes-store.js";
import { adminActor } from "../auth.js";
import { mintCodes, revokeCode } from "../operations.js";
import { codeView, decodeCursor, encodeCursor } from "../views.js";
import { cursor, id, pageLimit, usd, type AdminRoute } from "./route.js";

const DAY_MS = 86_400_000;
/** Codes expire within ten years at most. */
const MAX_EXPIRY_DAYS = 3650;

const batch = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[\w .:/-]+$/, "letters, digits, spaces and . : / - _ only");

/** Every request schema of this file (shared with the dashboard's administrator routes). */
export const codeSchemas = {
  params: z.object({ id }),
  listQuery: z.object({
    limit: pageLimit,
    cursor,
    batch: batch.optional(),
    state: z.enum(REDEMPTION_CODE_STATES as [RedemptionCodeState, ...RedemptionCodeState[]]).optional(),
  }),
  mintBody: z
    .object({
      value_usd: usd(MAX_BALANCE),
      count: z.number().int().min(1).max(MAX_CODES_PER_MINT).default(1),
      expires_in_days: z.number().int().min(1).max(MAX_EXPIRY_DAYS).optional(),
      expires_at: z.iso.datetime({ offset: true }).optional(),
      batch: batch.nullable().optional(),
      note: z.string().trim().max(500).nullable().optional(),
    })
    .strict()
    .refine((b) => !(b.expires_in_days !== undefined && b.expires_at !== undefined), { message: "give expires_in_days or expires_at, not both" }),
};

export type MintBody = z.infer<typeof codeSchemas.mintBody>;

/** The expiry of a mint request: expires_at, or expires_in_days (default 90) from now. */
export function mintExpiry(body: MintBody, now = Date.now()): number {
  if (body.expires_at !== undefined) {
    const at = Date.parse(body.expires_at);
    if (at <= now || at > now + MAX_EXPIRY_DAYS * DAY_MS)
      throw new GatewayError("invalid_request", `expires_at: must be in the future and within ${MAX_EXPIRY_DAYS} days`, { param: "expires_at" });
    return at;
  }
  return now + (body.expires_in_days ?? 90) * DAY_MS;
}

/** Mints in an audited transaction; the response is the only place the codes' texts ever appear. */
export async function mintFromBody(store: Store, actor: AuditActor, body: MintBody) {
  if (body.value_usd === 0n) throw new GatewayError("invalid_request", "value_usd: must be more than 0", { param: "value_usd" });
  const expiresAt = mintExpiry(body);
  const minted = await store.audited(actor, (tx) =>
    mintCodes(tx, {
      value: body.value_usd,
      count: body.count,
      expiresAt,
      batch: body.batch ?? null,
      note: body.note || null,
      createdBy: actor.name ?? actor.id,
    }),
  );
  return { object: "list", data: minted.map(({ code, raw }) => ({ ...codeView(code), code: raw })) };
}

/** One page of codes, newest first, for the admin API and the dashboard's codes page. */
export async function codesPage(store: Store, q: z.infer<typeof codeSchemas.listQuery>) {
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, 2);
  if (after && !/^\d{1,16}$/.test(after[0]!)) throw new GatewayError("invalid_request", "cursor is not a cursor this API returned", { param: "cursor" });
  const codes = await store.codes.list({
    limit: q.limit + 1,
    ...(after && { after: { createdAt: BigInt(after[0]!), id: after[1]! } }),
    ...(q.batch !== undefined && { batch: q.batch }),
    ...(q.state !== undefined && { state: q.state }),
  });
  const page = codes.slice(0, q.limit);
  const last = page.at(-1);
  const more = codes.length > q.limit && last !== undefined;
  return { data: page.map((c) => codeView(c)), nextCursor: more ? encodeCursor([String(last.createdAt), last.id]) : null };
}

export const codeRoutes: AdminRoute[] = [
  {
    method: "POST",
    url: "/codes",
    scope: "credits:write",
    async handler(request, reply, ctx) {
      const body = parseWith(codeSchemas.mintBody, request.body);
      const result = await mintFromBody(ctx.store, adminActor(request), body);
      reply.code(201);
      return result;
    },
  },
  {
    method: "GET",
    url: "/codes",
    scope: "credits:read",
    async handler(request, _reply, ctx) {
      const { data, nextCursor } = await codesPage(ctx.store, parseWith(codeSchemas.listQuery, request.query, "query"));
      return { object: "list", data, has_more: nextCursor !== null, next_cursor: nextCursor };
    },
  },
  {
    method: "POST",
    url: "/codes/:id/revoke",
    scope: "credits:write",
    async handler(request, _reply, ctx) {
      const { id: codeId } = parseWith(codeSchemas.params, request.params, "id");
      const code = await ctx.store.audited(adminActor(request), (tx) => revokeCode(tx, codeId));
      return { code: codeView(code) };
    },
  },
];
