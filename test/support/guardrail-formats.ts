// The four chat client formats as raw HTTP, for the guardrails tests: how each sends a user text,
// asks for a stream, and where the gateway model's answer shows.
export interface FormatCase {
  name: string;
  path: (stream: boolean) => string;
  headers: (key: string) => Record<string, string>;
  body: (text: string, stream: boolean) => Record<string, unknown>;
}

export const FORMATS: readonly FormatCase[] = [
  {
    name: "chat",
    path: () => "/v1/chat/completions",
    headers: (key) => ({ authorization: `Bearer ${key}` }),
    body: (text, stream) => ({ model: "gpt-mock", stream, messages: [{ role: "user", content: text }] }),
  },
  {
    name: "responses",
    path: () => "/v1/responses",
    headers: (key) => ({ authorization: `Bearer ${key}` }),
    body: (text, stream) => ({ model: "gpt-mock", stream, input: [{ role: "user", content: [{ type: "input_text", text }] }] }),
  },
  {
    name: "messages",
    path: () => "/v1/messages",
    headers: (key) => ({ "x-api-key": key, "anthropic-version": "2023-06-01" }),
    body: (text, stream) => ({ model: "gpt-mock", max_tokens: 200, stream, messages: [{ role: "user", content: [{ type: "text", text }] }] }),
  },
  {
    name: "gemini",
    path: (stream) => (stream ? "/v1beta/models/gpt-mock:streamGenerateContent?alt=sse" : "/v1beta/models/gpt-mock:generateContent"),
    headers: (key) => ({ "x-goog-api-key": key }),
    body: (text) => ({ contents: [{ role: "user", parts: [{ text }] }] }),
  },
];

export async function post(url: string, format: FormatCase, key: string, text: string, stream: boolean): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}${format.path(stream)}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...format.headers(key) },
    body: JSON.stringify(format.body(text, stream)),
  });
  return { status: response.status, text: await response.text() };
}

/** How a text appears inside JSON (a private key's newlines escaped). */
export const inJson = (text: string): string => JSON.stringify(text).slice(1, -1);
