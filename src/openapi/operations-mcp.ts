// POST, GET and DELETE /mcp (src/mcp/routes.ts): the MCP streamable HTTP endpoint. The messages are
// MCP's JSON-RPC (protocol revision 2025-11-25), described here only in outline: the MCP
// specification defines them.
import { z } from "zod";
import type { OperationSpec } from "./operation-spec.js";

const sessionHeader = z.object({
  "mcp-session-id": z.string().max(200).optional().describe("The session's id, from the initialize answer's Mcp-Session-Id header; absent only on initialize"),
});
const jsonRpc = z.looseObject({ jsonrpc: z.literal("2.0") });
const mcp = (spec: Omit<OperationSpec, "route" | "tag" | "auth" | "errorShape" | "headers">): OperationSpec => ({
  route: "/mcp",
  tag: "v1",
  auth: "api_key",
  errorShape: "openai",
  headers: sessionHeader,
  ...spec,
});
const sseStream = { mediaType: "text/event-stream", description: "JSON-RPC messages as SSE events" };

export const MCP_OPERATIONS: readonly OperationSpec[] = [
  mcp({
    method: "POST",
    summary: "MCP: send a JSON-RPC request or notification (initialize opens a session); tools, prompts and resources of the configured MCP servers",
    body: jsonRpc,
    responses: {
      200: { description: "The JSON-RPC answer, as JSON or an SSE stream", json: jsonRpc, raw: [sseStream] },
      202: { description: "A notification or response accepted" },
    },
  }),
  mcp({
    method: "GET",
    summary: "MCP: the session's stream of server notifications (list_changed)",
    responses: { 200: { description: "Server notifications", raw: [sseStream] } },
  }),
  mcp({
    method: "DELETE",
    summary: "MCP: end the session",
    responses: { 200: { description: "The session is closed; an empty body", raw: [{ mediaType: "application/octet-stream", description: "empty" }] } },
  }),
];
