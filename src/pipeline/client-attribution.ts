// Claude Code's attribution headers (its gateway protocol's "consume" headers): which session, which
// subagent and, with CLAUDE_CODE_GATEWAY_HINT_HEADERS=1, which kind of request. Recorded on the
// request's log line so an operator can group cost by session and agent. They are not forwarded
// upstream. Each value must fit a strict shape (length and characters) or it is left out: a
// header is client input, and the log must not become a place to write free text.

/** Session and agent ids: UUIDs, or a teammate's stable name-based id. */
const ID = /^[A-Za-z0-9._:@+-]{1,128}$/;
/** Short vocabulary words (agent types such as "general-purpose", "Explore", "custom"). */
const WORD = /^[A-Za-z0-9._-]{1,64}$/;

const ATTRIBUTION_HEADERS: ReadonlyArray<readonly [header: string, field: string, shape: RegExp]> = [
  ["x-claude-code-session-id", "session_id", ID],
  ["x-claude-code-agent-id", "agent_id", ID],
  ["x-claude-code-parent-agent-id", "parent_agent_id", ID],
  ["x-claude-code-request-class", "request_class", /^(?:main|subagent|workflow|compaction|auxiliary)$/],
  ["x-claude-code-agent-type", "agent_type", WORD],
  ["x-claude-code-compaction", "compaction", /^(?:auto|manual|reactive)$/],
  ["x-claude-code-context-compacted", "context_compacted", /^(?:auto|manual|reactive)$/],
  // Claude Code's own app ("cli", "cli-bg") and an Agent SDK host's declared app name.
  ["x-app", "app", WORD],
  ["x-client-app", "client_app", WORD],
];

/** The attribution fields a request carries, each checked against its shape; undefined when none. */
export function clientAttribution(headers: Record<string, string | string[] | undefined>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [header, field, shape] of ATTRIBUTION_HEADERS) {
    const value = headers[header];
    // A repeated header is not one the client sends; it is left out rather than guessed at.
    if (typeof value !== "string" || !shape.test(value)) continue;
    (out ??= {})[field] = value;
  }
  return out;
}
