// The getting-started snippets, as pure functions of the gateway's base URL, the key (or a
// placeholder) and the models: the dashboard renders exactly these strings, and
// test/browser/models-start.test.ts runs the curl and SDK snippets as rendered against a gateway.
// Imports nothing, so that the tests (NodeNext) and the web build (Vite) both read it.
//
// Base-URL forms (README "Clients", docs/clients.md): the OpenAI SDK, the Vercel AI SDK and Codex
// take the URL with /v1; the Anthropic SDK and Claude Code take it without (they append /v1/...).

/** The one environment variable every snippet reads the key from. */
export const KEY_ENV = "MODEL_GATEWAY_KEY";
/** What stands for the key where the raw key is not at hand (it is shown once). */
export const KEY_PLACEHOLDER = "PASTE_YOUR_KEY_HERE";
/** The prompt every snippet sends. */
export const HELLO = "Hello, gateway!";
/** Claude Code asks for 32,000 output tokens unless told otherwise (docs/clients.md, "Output tokens"). */
const CLAUDE_CODE_DEFAULT_OUTPUT = 32_000;
/** The max_tokens the Anthropic SDK snippets send, lowered to the model's limit. */
const ANTHROPIC_MAX_TOKENS = 1024;

export type SnippetLanguage = "sh" | "ts" | "py" | "toml";

export interface Snippet {
  id: "curl" | "openai-ts" | "openai-py" | "anthropic-ts" | "anthropic-py" | "vercel-ai" | "claude-code" | "codex";
  title: string;
  language: SnippetLanguage;
  /** Where the snippet goes or how it runs, for people. */
  note: string;
  code: string;
}

/** A chat model the snippets may name, with its output limit (null: not configured). */
export interface SnippetModel {
  id: string;
  maxOutputTokens: number | null;
}

export interface SnippetInput {
  /** The gateway's base URL without a trailing slash and without /v1 (gatewayBaseUrl). */
  baseUrl: string;
  /** The raw key, or null for the placeholder. */
  rawKey: string | null;
  /** The model most snippets use. */
  model: SnippetModel;
  /** A small, fast model for Claude Code's Haiku slot; default: `model`. */
  smallModel?: SnippetModel;
}

/** server.public_url when configured, else the origin the browser shows; never with a trailing slash. */
export function gatewayBaseUrl(publicUrl: string | null, origin: string): string {
  return (publicUrl ?? origin).replace(/\/+$/, "");
}

/** A word for a POSIX shell: as is when it is plainly safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A string literal valid in TypeScript, Python and TOML (JSON's escapes are valid in all three). */
function literal(text: string): string {
  return JSON.stringify(text);
}

function exportKey(rawKey: string | null): string {
  return `export ${KEY_ENV}=${shellWord(rawKey ?? KEY_PLACEHOLDER)}`;
}

export function gettingStartedSnippets(input: SnippetInput): Snippet[] {
  const base = input.baseUrl;
  const v1 = `${base}/v1`;
  const model = input.model;
  const small = input.smallModel ?? model;
  const chatBody = JSON.stringify({ model: model.id, messages: [{ role: "user", content: HELLO }] });
  const maxTokens = Math.min(ANTHROPIC_MAX_TOKENS, model.maxOutputTokens ?? ANTHROPIC_MAX_TOKENS);
  // Claude Code sends one output limit for every model it uses: at most the smaller model limit.
  const limits = [model.maxOutputTokens, small.maxOutputTokens].filter((n): n is number => n !== null);
  const claudeOutput = limits.length === 0 ? null : Math.min(CLAUDE_CODE_DEFAULT_OUTPUT, ...limits);

  return [
    {
      id: "curl",
      title: "curl",
      language: "sh",
      note: "Any shell. --fail-with-body exits non-zero on an error and still prints the gateway's error message.",
      code: [
        exportKey(input.rawKey),
        `curl -sS --fail-with-body ${shellWord(`${v1}/chat/completions`)} \\`,
        `  -H "Authorization: Bearer $${KEY_ENV}" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d ${shellWord(chatBody)}`,
      ].join("\n"),
    },
    {
      id: "openai-ts",
      title: "OpenAI SDK (TypeScript)",
      language: "ts",
      note: `npm install openai; run as an ES module (e.g. npx tsx hello.mts) with ${KEY_ENV} set. The base URL ends in /v1.`,
      code: [
        `import OpenAI from "openai";`,
        ``,
        `const client = new OpenAI({`,
        `  baseURL: ${literal(v1)},`,
        `  apiKey: process.env.${KEY_ENV},`,
        `});`,
        ``,
        `const completion = await client.chat.completions.create({`,
        `  model: ${literal(model.id)},`,
        `  messages: [{ role: "user", content: ${literal(HELLO)} }],`,
        `});`,
        `console.log(completion.choices[0]?.message.content);`,
      ].join("\n"),
    },
    {
      id: "openai-py",
      title: "OpenAI SDK (Python)",
      language: "py",
      note: `pip install openai; run with ${KEY_ENV} set. The base URL ends in /v1.`,
      code: [
        `import os`,
        `from openai import OpenAI`,
        ``,
        `client = OpenAI(`,
        `    base_url=${literal(v1)},`,
        `    api_key=os.environ[${literal(KEY_ENV)}],`,
        `)`,
        ``,
        `completion = client.chat.completions.create(`,
        `    model=${literal(model.id)},`,
        `    messages=[{"role": "user", "content": ${literal(HELLO)}}],`,
        `)`,
        `print(completion.choices[0].message.content)`,
      ].join("\n"),
    },
    {
      id: "anthropic-ts",
      title: "Anthropic SDK (TypeScript)",
      language: "ts",
      note: `npm install @anthropic-ai/sdk; run with ${KEY_ENV} set. The base URL has no /v1: the SDK adds /v1/messages.`,
      code: [
        `import Anthropic from "@anthropic-ai/sdk";`,
        ``,
        `const client = new Anthropic({`,
        `  baseURL: ${literal(base)},`,
        `  apiKey: process.env.${KEY_ENV},`,
        `});`,
        ``,
        `const message = await client.messages.create({`,
        `  model: ${literal(model.id)},`,
        `  max_tokens: ${maxTokens},`,
        `  messages: [{ role: "user", content: ${literal(HELLO)} }],`,
        `});`,
        `console.log(message.content);`,
      ].join("\n"),
    },
    {
      id: "anthropic-py",
      title: "Anthropic SDK (Python)",
      language: "py",
      note: `pip install anthropic; run with ${KEY_ENV} set. The base URL has no /v1: the SDK adds /v1/messages.`,
      code: [
        `import os`,
        `from anthropic import Anthropic`,
        ``,
        `client = Anthropic(`,
        `    base_url=${literal(base)},`,
        `    api_key=os.environ[${literal(KEY_ENV)}],`,
        `)`,
        ``,
        `message = client.messages.create(`,
        `    model=${literal(model.id)},`,
        `    max_tokens=${maxTokens},`,
        `    messages=[{"role": "user", "content": ${literal(HELLO)}}],`,
        `)`,
        `print(message.content)`,
      ].join("\n"),
    },
    {
      id: "vercel-ai",
      title: "Vercel AI SDK",
      language: "ts",
      note: `npm install ai @ai-sdk/openai; run with ${KEY_ENV} set. The OpenAI provider's base URL ends in /v1.`,
      code: [
        `import { createOpenAI } from "@ai-sdk/openai";`,
        `import { generateText } from "ai";`,
        ``,
        `const gateway = createOpenAI({`,
        `  baseURL: ${literal(v1)},`,
        `  apiKey: process.env.${KEY_ENV},`,
        `});`,
        ``,
        `const { text } = await generateText({`,
        `  model: gateway.chat(${literal(model.id)}),`,
        `  prompt: ${literal(HELLO)},`,
        `});`,
        `console.log(text);`,
      ].join("\n"),
    },
    {
      id: "claude-code",
      title: "Claude Code",
      language: "sh",
      note:
        "Environment variables, then run claude. The base URL has no /v1. Claude Code asks for its own model names; the ANTHROPIC_*_MODEL variables map them to this gateway's models." +
        (claudeOutput === null ? " Set CLAUDE_CODE_MAX_OUTPUT_TOKENS to at most the model's output limit." : ""),
      code: [
        exportKey(input.rawKey),
        `export ANTHROPIC_BASE_URL=${shellWord(base)}`,
        `export ANTHROPIC_API_KEY="$${KEY_ENV}"`,
        `# Claude Code's model names, mapped to this gateway's models`,
        `export ANTHROPIC_MODEL=${shellWord(model.id)}`,
        `export ANTHROPIC_DEFAULT_OPUS_MODEL=${shellWord(model.id)}`,
        `export ANTHROPIC_DEFAULT_SONNET_MODEL=${shellWord(model.id)}`,
        `export ANTHROPIC_DEFAULT_HAIKU_MODEL=${shellWord(small.id)}`,
        ...(claudeOutput === null
          ? []
          : [`# At most the models' output limit (Claude Code asks for ${CLAUDE_CODE_DEFAULT_OUTPUT} otherwise)`, `export CLAUDE_CODE_MAX_OUTPUT_TOKENS=${claudeOutput}`]),
        `claude`,
      ].join("\n"),
    },
    {
      id: "codex",
      title: "Codex CLI (config.toml)",
      language: "toml",
      note: `In ~/.codex/config.toml; then set ${KEY_ENV} as in the curl snippet and run codex. The base URL ends in /v1.`,
      code: [
        `model = ${literal(model.id)}`,
        `model_provider = "gateway"`,
        ``,
        `[model_providers.gateway]`,
        `name = "Model Gateway"`,
        `base_url = ${literal(v1)}`,
        `wire_api = "responses"`,
        `env_key = ${literal(KEY_ENV)}`,
      ].join("\n"),
    },
  ];
}
