// The soak's client: one request of each kind of mixed traffic, and what the client itself saw of it
// (status, request id, the cost the gateway told it), which the checks compare with the ledger.
import { parseUsd } from "../../../src/core/money.js";

export const SOAK_KINDS = [
  "chat-buffered",
  "chat-stream",
  "responses-buffered",
  "responses-stream",
  "messages-buffered",
  "messages-stream",
  "failover",
  "upstream-error",
  "cancel",
  "revoked-key",
] as const;
export type SoakKind = (typeof SOAK_KINDS)[number];

/**
 * ok: answered and charged (costNano from the client's view); failed: an error the kind expects
 * (nothing may be charged); cancelled: the client aborted mid-stream (at most one ledger row);
 * unexpected: anything else (the soak fails).
 */
export type OutcomeClass = "ok" | "failed" | "cancelled" | "unexpected";

export interface SoakOutcome {
  kind: SoakKind;
  requestId: string | null;
  status: number;
  outcome: OutcomeClass;
  costNano: bigint | null;
  attempts: number;
  detail?: string;
}

export interface SoakClient {
  baseUrl: string;
  apiKey: string;
  /** The key revoked mid-run, and when its revocation started and ended (ms epoch; null before). */
  revocable: { apiKey: string; revokeStartedAt: number | null; revokedAt: number | null };
  timeoutMs: number;
}

const MESSAGES = [{ role: "user", content: "Say hello in a few words." }];

function costOf(text: string | null | undefined): bigint | null {
  return typeof text === "string" ? (parseUsd(text) ?? null) : null;
}

/** The SSE `data:` payloads of a body, parsed where they are JSON. */
function sseEvents(text: string): unknown[] {
  const events: unknown[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const data = line.slice(6).trim();
    if (data === "[DONE]") continue;
    try {
      events.push(JSON.parse(data));
    } catch {
      events.push(null);
    }
  }
  return events;
}

type Json = Record<string, unknown>;
const field = (value: unknown, name: string): unknown => (typeof value === "object" && value !== null ? (value as Json)[name] : undefined);

/** The in-band cost of a finished stream, by route (docs/api-contract.md, "Cost in-band"). */
function streamCost(route: "chat" | "responses" | "messages", text: string): bigint | null {
  for (const event of sseEvents(text).reverse()) {
    if (route === "chat") {
      const cost = field(field(event, "usage"), "cost");
      if (typeof cost === "string") return costOf(cost);
    } else if (route === "responses") {
      if (field(event, "type") === "response.completed") return costOf(field(field(field(event, "response"), "usage"), "cost") as string);
    } else if (field(event, "type") === "message_delta") {
      return costOf(field(field(event, "usage"), "cost") as string);
    }
  }
  return null;
}

function requestFor(kind: SoakKind): { path: string; body: Json; route: "chat" | "responses" | "messages"; stream: boolean } {
  switch (kind) {
    case "chat-stream":
      return { path: "/v1/chat/completions", route: "chat", stream: true, body: { model: "gpt-soak", messages: MESSAGES, stream: true, stream_options: { include_usage: true } } };
    case "responses-buffered":
      return { path: "/v1/responses", route: "responses", stream: false, body: { model: "gpt-soak", input: "Say hello in a few words.", max_output_tokens: 64 } };
    case "responses-stream":
      return { path: "/v1/responses", route: "responses", stream: true, body: { model: "gpt-soak", input: "Say hello in a few words.", max_output_tokens: 64, stream: true } };
    case "messages-buffered":
      return { path: "/v1/messages", route: "messages", stream: false, body: { model: "gpt-soak", max_tokens: 64, messages: MESSAGES } };
    case "messages-stream":
      return { path: "/v1/messages", route: "messages", stream: true, body: { model: "gpt-soak", max_tokens: 64, messages: MESSAGES, stream: true } };
    case "failover":
      return { path: "/v1/chat/completions", route: "chat", stream: false, body: { model: "gpt-soak-failover", messages: MESSAGES, max_tokens: 64 } };
    case "upstream-error":
      return { path: "/v1/chat/completions", route: "chat", stream: false, body: { model: "gpt-soak-broken", messages: MESSAGES, max_tokens: 64 } };
    case "cancel":
      return {
        path: "/v1/chat/completions",
        route: "chat",
        stream: true,
        body: { model: "gpt-soak-slow", messages: MESSAGES, stream: true, stream_options: { include_usage: true } },
      };
    case "chat-buffered":
    case "revoked-key":
      return { path: "/v1/chat/completions", route: "chat", stream: false, body: { model: "gpt-soak", messages: MESSAGES, max_tokens: 64 } };
  }
}

/** Sends one request of the kind and classifies what came back; never throws. */
export async function sendOne(client: SoakClient, kind: SoakKind): Promise<SoakOutcome> {
  const spec = requestFor(kind);
  const sentAt = Date.now();
  const apiKey = kind === "revoked-key" ? client.revocable.apiKey : client.apiKey;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("soak client timeout")), client.timeoutMs);
  const base = { kind, requestId: null, status: 0, costNano: null, attempts: 0 } satisfies Partial<SoakOutcome>;
  try {
    const response = await fetch(`${client.baseUrl}${spec.path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(spec.body),
      signal: controller.signal,
    });
    const seen = { ...base, requestId: response.headers.get("x-request-id"), status: response.status, attempts: Number(response.headers.get("x-gateway-attempts") ?? "0") };
    if (kind === "cancel" && response.status === 200 && response.body) {
      // Read the first chunk of the stream, then go away mid-stream.
      const reader = response.body.getReader();
      await reader.read();
      await reader.cancel();
      return { ...seen, outcome: "cancelled" };
    }
    const text = await response.text();
    if (kind === "upstream-error") {
      return { ...seen, outcome: response.status >= 500 && text.includes('"error"') ? "failed" : "unexpected", detail: text.slice(0, 200) };
    }
    if (kind === "revoked-key") {
      const { revokeStartedAt, revokedAt } = client.revocable;
      const expectRevoked = revokedAt !== null && sentAt > revokedAt;
      const mayBeEither = revokeStartedAt !== null && !expectRevoked;
      if (response.status === 401 && (expectRevoked || mayBeEither)) return { ...seen, outcome: "failed" };
      if (response.status !== 200 || expectRevoked) return { ...seen, outcome: "unexpected", detail: `revoked key answered ${response.status}: ${text.slice(0, 200)}` };
    }
    if (response.status !== 200) return { ...seen, outcome: "unexpected", detail: text.slice(0, 300) };
    const costNano = spec.stream ? streamCost(spec.route, text) : costOf(response.headers.get("x-gateway-cost-usd"));
    if (costNano === null) return { ...seen, outcome: "unexpected", detail: "no cost in the answer" };
    if (spec.stream && spec.route === "chat" && !text.trimEnd().endsWith("data: [DONE]")) return { ...seen, outcome: "unexpected", detail: "stream cut short" };
    return { ...seen, costNano, outcome: "ok" };
  } catch (error) {
    return { ...base, outcome: "unexpected", detail: `client error: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

/** A fixed interleaving of the kinds (weights by repetition): request i sends MIX[i % MIX.length]. */
export const MIX: SoakKind[] = [
  "chat-buffered",
  "chat-stream",
  "responses-buffered",
  "messages-stream",
  "chat-buffered",
  "failover",
  "chat-stream",
  "cancel",
  "responses-stream",
  "messages-buffered",
  "upstream-error",
  "revoked-key",
];
