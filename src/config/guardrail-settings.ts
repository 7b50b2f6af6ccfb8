// The config file's `guardrails` list compiled once at load (and at every reload): each custom
// pattern through RE2 (a pattern RE2 refuses is a config error naming the guardrail), each
// built-in name checked, each webhook complete.
import { compileBuiltins, compileCustom, type CompiledPattern } from "../core/guardrails/matcher.js";
import type { Guardrail, GuardrailSettings } from "../core/guardrails/guardrail.js";
import type { GuardrailFileEntry } from "./guardrail-schema.js";
import type { ConfigIssue } from "./gateway-config.js";

export function guardrailSettingsFrom(entries: readonly GuardrailFileEntry[], chargeBlockedAnswers: boolean, issues: ConfigIssue[]): GuardrailSettings {
  const list: Guardrail[] = [];
  const names = new Set<string>();
  entries.forEach((entry, index) => {
    const field = `guardrails[${index}]`;
    const fail = (where: string, message: string) => issues.push({ field: `${field}${where}`, message: `guardrail "${entry.name}": ${message}` });
    if (names.has(entry.name)) return fail(".name", "the name is used twice");
    names.add(entry.name);
    const patterns: CompiledPattern[] = [];
    if (entry.kind === "webhook") {
      if (!entry.webhook) return fail(".webhook", "a webhook guardrail needs webhook.url");
      if (entry.patterns.length > 0) return fail(".patterns", "a webhook guardrail has no patterns");
    } else {
      if (entry.webhook) return fail(".webhook", `a ${entry.kind} guardrail has no webhook`);
      if (entry.patterns.length === 0) return fail(".patterns", "at least one pattern is needed");
      for (const [i, pattern] of entry.patterns.entries()) {
        try {
          if (entry.kind === "builtin") {
            if (typeof pattern !== "string") throw new Error("a builtin guardrail lists pattern ids; custom patterns need kind: regex");
            patterns.push(...compileBuiltins([pattern]));
          } else {
            if (typeof pattern === "string") throw new Error("a regex guardrail's patterns are { name, pattern } entries");
            patterns.push(
              compileCustom({
                name: pattern.name,
                pattern: pattern.pattern,
                caseInsensitive: pattern.case_insensitive,
                ...(pattern.max_length !== undefined && { maxLength: pattern.max_length }),
              }),
            );
          }
        } catch (error) {
          return fail(`.patterns[${i}]`, error instanceof Error ? error.message : String(error));
        }
      }
    }
    list.push({
      name: entry.name,
      kind: entry.kind,
      request: entry.applies_to.includes("request"),
      response: entry.applies_to.includes("response"),
      mode: entry.mode,
      applies: entry.applies,
      description: entry.description,
      onFailure: entry.on_failure,
      patterns: dedupe(patterns),
      webhook: entry.webhook ? { url: entry.webhook.url, timeoutMs: entry.webhook.timeout_ms, headers: entry.webhook.headers } : null,
    });
  });
  return { list, chargeBlockedAnswers };
}

/** A builtin id listed twice (alone and in a group) runs once. */
function dedupe(patterns: CompiledPattern[]): CompiledPattern[] {
  const seen = new Set<string>();
  return patterns.filter((p) => (seen.has(p.label) ? false : (seen.add(p.label), true)));
}
