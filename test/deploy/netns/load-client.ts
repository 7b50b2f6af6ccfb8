// The load: a few loops sending chat requests (every third one streamed) through HAProxy, or one
// request straight at a host, each recorded with what the client saw: status, X-Request-ID, the
// cost the answer reported, the error's type and code, latency. Nothing is retried: a failure is
// what a client of the gateway would have seen.
export type Outcome =
  /** 200 and a whole answer (a stream up to [DONE], no error frame): must be in the ledger once. */
  | "answered"
  /** An error answer in the gateway's shape (JSON error with a type, or a stream's error frame). */
  | "refused"
  /** Anything else: HAProxy's own answer, a cut connection or stream, a client timeout. */
  | "broken";

export interface Attempt {
  via: string;
  stream: boolean;
  startedAt: number;
  latencyMs: number;
  status: number;
  outcome: Outcome;
  requestId: string | null;
  costNano: bigint | null;
  errorType: string | null;
  errorCode: string | null;
  detail: string;
}

/** Longer than any configured database timeout: a request still open then is a hang. */
export const CLIENT_TIMEOUT_MS = 30_000;

export function usdToNano(text: string): bigint {
  const [whole = "0", fraction = ""] = text.split(".");
  return BigInt(whole) * 1_000_000_000n + BigInt((fraction + "000000000").slice(0, 9));
}

export async function chat(baseUrl: string, via: string, key: string, options: { stream: boolean; model?: string }): Promise<Attempt> {
  const startedAt = Date.now();
  const attempt: Attempt = {
    via,
    stream: options.stream,
    startedAt,
    latencyMs: 0,
    status: 0,
    outcome: "broken",
    requestId: null,
    costNano: null,
    errorType: null,
    errorCode: null,
    detail: "",
  };
  try {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: options.model ?? "chat-mock",
        messages: [{ role: "user", content: "How are you?" }],
        max_tokens: 50,
        ...(options.stream && { stream: true, stream_options: { include_usage: true } }),
      }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    attempt.status = response.status;
    attempt.requestId = response.headers.get("x-request-id");
    const text = await response.text();
    attempt.latencyMs = Date.now() - startedAt;
    if (response.status === 200 && options.stream) readStream(attempt, text);
    else if (response.status === 200) readAnswer(attempt, text);
    else readError(attempt, text);
  } catch (error) {
    attempt.latencyMs = Date.now() - startedAt;
    attempt.detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  return attempt;
}

function readAnswer(attempt: Attempt, text: string): void {
  const body = JSON.parse(text) as { usage?: { cost?: string } };
  if (typeof body.usage?.cost !== "string") {
    attempt.detail = `answer without usage.cost: ${text.slice(0, 300)}`;
    return;
  }
  attempt.outcome = "answered";
  attempt.costNano = usdToNano(body.usage.cost);
}

function readStream(attempt: Attempt, text: string): void {
  const frames = text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6));
  for (const frame of frames) {
    if (frame === "[DONE]") continue;
    const parsed = JSON.parse(frame) as { error?: { type?: string; code?: string }; usage?: { cost?: string } | null };
    if (parsed.error) {
      attempt.outcome = "refused";
      attempt.errorType = parsed.error.type ?? null;
      attempt.errorCode = parsed.error.code ?? null;
      attempt.detail = `stream error frame: ${frame.slice(0, 300)}`;
      return;
    }
    if (typeof parsed.usage?.cost === "string") attempt.costNano = usdToNano(parsed.usage.cost);
  }
  if (frames.at(-1) !== "[DONE]") {
    attempt.detail = `stream ended without [DONE] after ${frames.length} frames`;
    return;
  }
  // A stream whose settlement is retried in the background carries no cost (docs/billing.md): its
  // ledger row comes later and is compared all the same.
  attempt.outcome = "answered";
}

function readError(attempt: Attempt, text: string): void {
  try {
    const body = JSON.parse(text) as { error?: { type?: string; code?: string } };
    if (body.error?.type) {
      attempt.outcome = "refused";
      attempt.errorType = body.error.type;
      attempt.errorCode = body.error.code ?? null;
      return;
    }
  } catch {
    // not the gateway's JSON
  }
  attempt.detail = `status ${attempt.status}: ${text.slice(0, 200)}`;
}

export interface Load {
  attempts: Attempt[];
  /** Stops the loops and resolves once every request in flight has ended. */
  stop(): Promise<void>;
}

export function startLoad(baseUrl: string, key: string, loops: number): Load {
  const attempts: Attempt[] = [];
  let running = true;
  let sequence = 0;
  const loop = async () => {
    while (running) {
      sequence += 1;
      attempts.push(await chat(baseUrl, "haproxy", key, { stream: sequence % 3 === 0 }));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all(Array.from({ length: loops }, loop));
  return {
    attempts,
    stop: async () => {
      running = false;
      await done;
    },
  };
}
