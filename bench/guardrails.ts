// `node --import tsx bench/guardrails.ts`: the CPU the guardrails add to one request, measured on
// the functions the request path calls (no server, so no network or scheduling noise): the request
// stage over a Chat body (1 KB and 10 KB of prose with one e-mail address), and a streamed answer
// of 2,000 characters in 40-character deltas through the holdback window, with every built-in
// pattern (secrets and personal_data) in mask mode; and re2js against V8's RegExp for the same
// patterns on the 10 KB text (decision 0041). Medians of 7 rounds, microseconds per request.
import { compileBuiltins, compileCustom, findMatches } from "../src/core/guardrails/matcher.js";
import { BUILTIN_PATTERNS } from "../src/core/guardrails/builtin-patterns.js";
import type { Guardrail } from "../src/core/guardrails/guardrail.js";
import { checkTexts } from "../src/pipeline/guardrails/check-texts.js";
import { GuardedStream } from "../src/pipeline/guardrails/stream-guard.js";
import { listTexts, replaceTexts } from "../src/pipeline/guardrails/text-parts.js";
import type { StreamTranslator } from "../src/upstreams/plan.js";
import { median } from "./lib/stats.js";

const guardrail: Guardrail = {
  name: "all",
  kind: "builtin",
  request: true,
  response: true,
  mode: "mask",
  applies: "all",
  description: "",
  onFailure: "closed",
  patterns: compileBuiltins(["secrets", "personal_data"]),
  webhook: null,
};
const PROSE = "The quarterly report covers revenue, costs and the plan for 2027; call the desk at extension 4411 before Friday. ";
const prose = (chars: number) => PROSE.repeat(Math.ceil(chars / PROSE.length)).slice(0, chars) + " Write to jane.doe@example.com.";
const body = (chars: number) => ({
  model: "m",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: prose(chars) },
  ],
});

function timeUs(rounds: number, perRound: number, run: () => unknown): number {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = process.cpuUsage();
    for (let i = 0; i < perRound; i++) run();
    const used = process.cpuUsage(started);
    samples.push((used.user + used.system) / perRound);
  }
  return median(samples);
}

async function requestStageUs(chars: number): Promise<number> {
  const value = body(chars);
  const samples: number[] = [];
  for (let r = 0; r < 7; r++) {
    const started = process.cpuUsage();
    for (let i = 0; i < 200; i++) {
      const texts = listTexts(value);
      const checked = await checkTexts([guardrail], "request", texts, "req");
      replaceTexts(value, checked.texts);
    }
    const used = process.cpuUsage(started);
    samples.push((used.user + used.system) / 200);
  }
  return median(samples);
}

function streamUs(): number {
  const answer = prose(2_000);
  const pieces: string[] = [];
  for (let at = 0; at < answer.length; at += 40) pieces.push(answer.slice(at, at + 40));
  return timeUs(7, 100, () => {
    const inner: StreamTranslator = {
      push: (event) => [{ data: { choices: [{ index: 0, delta: { content: event.data } }] } }],
      end: () => [],
      fail: () => [],
      reportedUsage: () => null,
      deliveredText: () => "",
    };
    const guard = new GuardedStream(inner, [guardrail], 256, () => undefined);
    for (const piece of pieces) guard.push({ data: piece });
    guard.end();
  });
}

const text10k = prose(10_240);
const re2Builtins = BUILTIN_PATTERNS.map((p) => compileCustom({ name: p.id, pattern: p.source.replace("{0,8000}?", "*?") }));
console.log(`request stage, 1 KB body:  ${(await requestStageUs(1_024)).toFixed(1)} us`);
console.log(`request stage, 10 KB body: ${(await requestStageUs(10_240)).toFixed(1)} us`);
console.log(`stream, 2,000 chars in 40-char deltas: ${streamUs().toFixed(1)} us`);
console.log(`built-ins on 10 KB, V8 RegExp: ${timeUs(7, 100, () => findMatches(guardrail.patterns, text10k)).toFixed(1)} us`);
console.log(`built-ins on 10 KB, re2js:     ${timeUs(7, 10, () => findMatches(re2Builtins, text10k)).toFixed(1)} us`);
