// The shape of an OpenAPI operation entry (OperationSpec and its parts) and the small helpers the
// operation lists build entries with: answer constructors (ok, created, noContent, sse), the
// per-family defaults (v1, admin, dash) and the answer wrappers more than one family shares.
import { z } from "zod";
import * as r from "./response-schemas.js";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * Who may call: an API key (Bearer or x-api-key), an admin token, a dashboard session (writes also
 * need the CSRF header), the metrics token, or anyone.
 */
export type Auth = "api_key" | "google_api_key" | "any_api_key" | "admin_token" | "session" | "metrics_token" | "none";

/** A non-JSON answer: its media type and, for text, a schema of the text. */
export interface RawContent {
  mediaType: string;
  description: string;
}

export interface ResponseSpec {
  description: string;
  /** The JSON body; absent for an answer without one (204, 304). */
  json?: z.ZodType;
  /** Other media types the answer may have (a stream, a CSV file, a video). */
  raw?: RawContent[];
}

export interface OperationSpec {
  method: HttpMethod;
  /** The path as Fastify registers it (`:id`, or `*` for a wildcard, which `wildcard` names). */
  route: string;
  wildcard?: string;
  summary: string;
  tag: "v1" | "admin" | "dashboard" | "service";
  auth: Auth;
  /** The error envelope of the route's refusals. */
  errorShape: "openai" | "anthropic" | "by_caller" | "google";
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** Other media types the body may come as, each with its schema (JSON is `body`). */
  otherBodies?: Record<string, z.ZodType>;
  responses: Record<number, ResponseSpec>;
  /** The admin scope the route needs (admin routes). */
  scope?: string;
}

export const sse = (format: string): RawContent => ({ mediaType: "text/event-stream", description: `stream: true: ${format} streaming events` });
export const ok = (json: z.ZodType, description = "OK"): Record<number, ResponseSpec> => ({ 200: { description, json } });
export const created = (json: z.ZodType): Record<number, ResponseSpec> => ({ 201: { description: "Created", json } });
export const noContent: Record<number, ResponseSpec> = { 204: { description: "Done; no body" } };

const ADMIN = "/admin/v1";
const DASH = "/dashboard/api";

export const keyWrap = z.object({ key: r.keyViewSchema });
export const codeWrap = z.object({ code: r.codeViewSchema });

export const v1 = (spec: Omit<OperationSpec, "tag" | "auth" | "errorShape"> & Partial<Pick<OperationSpec, "auth" | "errorShape">>): OperationSpec => ({
  tag: "v1",
  auth: "api_key",
  errorShape: "openai",
  ...spec,
});
export const admin = (spec: Omit<OperationSpec, "tag" | "auth" | "errorShape" | "route"> & { path: string }): OperationSpec => ({
  tag: "admin",
  auth: "admin_token",
  errorShape: "openai",
  route: `${ADMIN}${spec.path}`,
  ...spec,
});
export const dash = (spec: Omit<OperationSpec, "tag" | "auth" | "errorShape" | "route"> & { path: string; auth?: Auth }): OperationSpec => ({
  tag: "dashboard",
  auth: "session",
  errorShape: "openai",
  route: `${DASH}${spec.path}`,
  ...spec,
});
