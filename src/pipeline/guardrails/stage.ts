// Stage: guardrails (docs/configuration.md, "Guardrails"). On the request, after its model is
// resolved and before it is planned: every text part of the client's body, in any format, checked
// and masked once, so every plan (and every deployment of a routing group) sends the masked text;
// a block is guardrail_blocked (400) before anything is held or sent. On the answer: a buffered
// body in the client's format, or a stream through GuardedStream (stream-guard.ts).
import type { FastifyRequest } from "fastify";
import type { Guardrail, GuardrailAction, GuardrailSide } from "../../core/guardrails/guardrail.js";
import { holdbackChars, selectGuardrails, unknownGuardrails } from "../../core/guardrails/guardrail.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { StreamTranslator } from "../../upstreams/plan.js";
import type { PipelineServices } from "../services.js";
import { checkTexts, guardrailsFor, patternAction, type GuardrailBlock, type GuardrailDecision } from "./check-texts.js";
import { GuardedStream } from "./stream-guard.js";
import { listTexts, mapTexts, replaceTexts } from "./text-parts.js";

const STRENGTH: Readonly<Record<GuardrailAction, number>> = { pass: 0, log: 1, error: 2, mask: 3, block: 4 };

/** Records a decision on the request's meter: per side and guardrail, the strongest action. */
export function noteDecision(request: FastifyRequest, decision: GuardrailDecision): void {
  const decisions = (request.meter.guardrails ??= new Map<string, GuardrailAction>());
  const key = `${decision.side}:${decision.guardrail}`;
  const before = decisions.get(key);
  if (before === undefined || STRENGTH[decision.action] > STRENGTH[before]) decisions.set(key, decision.action);
}

/** The refusal for a block: names the guardrail, never the text. */
export function guardrailError(block: GuardrailBlock, side: GuardrailSide): GatewayError {
  const what = side === "request" ? "The request" : "The answer";
  return block.unavailable
    ? new GatewayError("guardrail_blocked", `${what} could not be checked by guardrail "${block.guardrail}" (its moderator failed), and it fails closed.`, {
        code: "guardrail_unavailable",
      })
    : new GatewayError("guardrail_blocked", `${what} was blocked by guardrail "${block.guardrail}".`, { code: "guardrail_blocked" });
}

const warned = new WeakMap<readonly Guardrail[], Set<string>>();

/**
 * The guardrails of this request's side: every `all` one and the `selected` ones its key and its
 * workspace list. A listed name the config no longer has is skipped, with one warning per name and
 * config.
 */
function requestGuardrails(services: PipelineServices, request: FastifyRequest, side: GuardrailSide): Guardrail[] {
  const list = services.config.guardrails.list;
  const principal = request.principal;
  const switchedOn = [...principal.key.guardrails, ...(principal.workspace?.guardrails ?? [])];
  if (switchedOn.length > 0) {
    let seen = warned.get(list);
    if (seen === undefined) warned.set(list, (seen = new Set<string>()));
    for (const name of unknownGuardrails(list, switchedOn)) {
      if (seen.has(name) || seen.size >= 1000) continue;
      seen.add(name);
      request.log.warn(
        { guardrail: name, keyId: principal.key.id, workspaceId: principal.workspace?.id ?? null },
        "a key or workspace lists a guardrail the config no longer has; ignored",
      );
    }
  }
  return guardrailsFor(selectGuardrails(list, switchedOn), side);
}

/** The answer-side guardrails this request's key or workspace switched on (the response cache's key). */
export function selectedAnswerGuardrails(services: PipelineServices, request: FastifyRequest): string[] {
  return requestGuardrails(services, request, "response")
    .filter((g) => g.applies === "selected")
    .map((g) => g.name);
}

async function guardValue(services: PipelineServices, request: FastifyRequest, side: GuardrailSide, value: unknown): Promise<{ value: unknown; blocked: GuardrailBlock | null }> {
  const guardrails = requestGuardrails(services, request, side);
  if (guardrails.length === 0) return { value, blocked: null };
  const texts = listTexts(value);
  const checked = await checkTexts(guardrails, side, texts, request.id);
  for (const decision of checked.decisions) noteDecision(request, decision);
  if (checked.blocked) return { value, blocked: checked.blocked };
  return { value: checked.texts.every((text, i) => text === texts[i]) ? value : replaceTexts(value, checked.texts), blocked: null };
}

/** The request body as it may be sent (masked), or guardrail_blocked. */
export async function guardRequest(services: PipelineServices, request: FastifyRequest, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const guarded = await guardValue(services, request, "request", body);
  if (guarded.blocked) throw guardrailError(guarded.blocked, "request");
  return guarded.value as Record<string, unknown>;
}

/** A buffered answer in the client's format, masked, or the block that stops it. */
export function guardAnswer(services: PipelineServices, request: FastifyRequest, body: unknown): Promise<{ value: unknown; blocked: GuardrailBlock | null }> {
  return guardValue(services, request, "response", body);
}

/** What a stored answer (a Responses turn) goes through: the answer side's pattern masks; null: nothing. */
export function storedAnswerMask(services: PipelineServices, request: FastifyRequest): ((value: unknown) => unknown) | null {
  const masks = requestGuardrails(services, request, "response").filter((g) => g.webhook === null && g.mode === "mask");
  if (masks.length === 0) return null;
  return (value) => mapTexts(value, (text) => masks.reduce((out, guardrail) => patternAction(guardrail, [out]).texts[0]!, text));
}

/**
 * The stream's translator behind the answer side's pattern guardrails; null when there are none.
 * A webhook on the answer side checks buffered answers only (a stream is not held whole).
 */
export function guardStream(services: PipelineServices, request: FastifyRequest, inner: StreamTranslator): GuardedStream | null {
  const guardrails = requestGuardrails(services, request, "response").filter((g) => g.webhook === null);
  if (guardrails.length === 0) return null;
  return new GuardedStream(inner, guardrails, holdbackChars(guardrails), (decision) => noteDecision(request, decision));
}
