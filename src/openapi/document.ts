// The OpenAPI 3.1 document, generated from OPERATIONS (operations.ts) with zod's own JSON Schema
// output (draft 2020-12, OpenAPI 3.1's dialect). Built once, on the first GET /openapi.json.
import { z } from "zod";
import { ADMIN_API_PREFIX, ADMIN_API_ROUTES } from "../admin/index.js";
import { SESSION_COOKIE } from "../dashboard/session-auth.js";
import { anthropicErrorSchema, googleErrorSchema, openAiErrorSchema } from "./response-schemas.js";
import type { OperationSpec, ResponseSpec } from "./operation-spec.js";
import { OPERATIONS } from "./operations.js";
import { alertWebhooks } from "./operations-alerts.js";

type JsonSchema = Record<string, unknown>;

/** Draft 2020-12 JSON Schema of a zod schema; `input` for what clients send (before transforms). */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
    override: (ctx) => {
      // An uploaded file (z.instanceof(File)) in a multipart form.
      if (ctx.zodSchema._zod.def.type === "custom") Object.assign(ctx.jsonSchema, { type: "string", contentMediaType: "application/octet-stream" });
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** `/admin/v1/accounts/:id` -> `/admin/v1/accounts/{id}`; a wildcard takes the operation's name for it. */
export function openApiPath(operation: Pick<OperationSpec, "route" | "wildcard">): string {
  return operation.route.replace(/:([A-Za-z_]+)/g, "{$1}").replace(/\*$/, `{${operation.wildcard ?? "path"}}`);
}

function parameters(schema: z.ZodObject | undefined, where: "path" | "query" | "header"): JsonSchema[] {
  if (!schema) return [];
  const json = jsonSchemaOf(schema, "input");
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === "path" || required.has(name), schema: rest, ...(typeof description === "string" && { description }) };
  });
}

function response(spec: ResponseSpec): JsonSchema {
  const content: Record<string, JsonSchema> = {};
  if (spec.json) content["application/json"] = { schema: jsonSchemaOf(spec.json, "output") };
  for (const raw of spec.raw ?? []) content[raw.mediaType] = { schema: { type: "string", description: raw.description } };
  return { description: spec.description, ...(Object.keys(content).length > 0 && { content }) };
}

function errorResponses(operation: OperationSpec): Record<string, JsonSchema> {
  const schema =
    operation.errorShape === "anthropic"
      ? { $ref: "#/components/schemas/AnthropicError" }
      : operation.errorShape === "openai"
        ? { $ref: "#/components/schemas/Error" }
        : operation.errorShape === "google"
          ? { $ref: "#/components/schemas/GoogleError" }
          : { anyOf: [{ $ref: "#/components/schemas/Error" }, { $ref: "#/components/schemas/AnthropicError" }, { $ref: "#/components/schemas/GoogleError" }] };
  const error = (description: string) => ({
    description,
    headers: { "X-Request-ID": { $ref: "#/components/headers/RequestId" } },
    content: { "application/json": { schema } },
  });
  return { "4XX": error("Refused: an error from the catalogue (docs/api-contract.md)"), "5XX": error("Failed: an error from the catalogue") };
}

const SECURITY: Record<OperationSpec["auth"], (operation: OperationSpec) => JsonSchema[]> = {
  none: () => [],
  api_key: () => [{ ApiKey: [] }, { AnthropicApiKey: [] }],
  google_api_key: () => [{ GoogleApiKey: [] }, { GoogleApiKeyQuery: [] }, { ApiKey: [] }],
  // The answer's shape follows the key's header: OpenAI's, Anthropic's or Google's.
  any_api_key: () => [{ ApiKey: [] }, { AnthropicApiKey: [] }, { GoogleApiKey: [] }, { GoogleApiKeyQuery: [] }],
  admin_token: (operation) => [{ AdminToken: operation.scope ? [operation.scope] : [] }],
  // Writes also need the CSRF header; reads need only the session.
  session: (operation) => (operation.method === "GET" ? [{ DashboardSession: [] }] : [{ DashboardSession: [], CsrfToken: [] }]),
  metrics_token: () => [{ MetricsToken: [] }],
};

function scopeOf(operation: OperationSpec): string | undefined {
  if (operation.tag !== "admin") return undefined;
  const url = operation.route.slice(ADMIN_API_PREFIX.length);
  return ADMIN_API_ROUTES.find((route) => route.method === operation.method && route.url === url)?.scope;
}

function operationObject(operation: OperationSpec): JsonSchema {
  const withScope = { ...operation, scope: operation.scope ?? scopeOf(operation) };
  const bodies = Object.entries({ ...(operation.body && { "application/json": operation.body }), ...operation.otherBodies });
  return {
    operationId: `${operation.method.toLowerCase()}${openApiPath(operation)
      .replace(/[{}]/g, "")
      .replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`,
    summary: operation.summary,
    tags: [operation.tag],
    ...(withScope.scope && { description: `Needs the admin scope \`${withScope.scope}\`.` }),
    security: SECURITY[operation.auth](withScope),
    parameters: [...parameters(operation.params, "path"), ...parameters(operation.query, "query"), ...parameters(operation.headers, "header")],
    ...(bodies.length > 0 && {
      requestBody: { required: true, content: Object.fromEntries(bodies.map(([type, schema]) => [type, { schema: jsonSchemaOf(schema, "input") }])) },
    }),
    responses: {
      ...Object.fromEntries(Object.entries(operation.responses).map(([status, spec]) => [status, response(spec)])),
      ...errorResponses(operation),
    },
  };
}

export function buildOpenApiDocument(version: string, operations: readonly OperationSpec[] = OPERATIONS): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of operations) {
    const path = openApiPath(operation);
    (paths[path] ??= {})[operation.method.toLowerCase()] = operationObject(operation);
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "Model Gateway",
      version,
      description: "One authenticated, metered front door for language, image and video models. Generated from the schemas the server validates with.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags: [
      { name: "v1", description: "The model API (API keys)" },
      { name: "admin", description: "The admin API (admin tokens, docs/operations.md)" },
      { name: "dashboard", description: "The dashboard's JSON API (session cookie and CSRF header)" },
      { name: "service", description: "Health, metrics and this document" },
    ],
    paths,
    // Alert events a subscribed endpoint receives (ADR 0040).
    webhooks: alertWebhooks(jsonSchemaOf),
    components: {
      schemas: {
        Error: jsonSchemaOf(openAiErrorSchema, "output"),
        AnthropicError: jsonSchemaOf(anthropicErrorSchema, "output"),
        GoogleError: jsonSchemaOf(googleErrorSchema, "output"),
      },
      headers: { RequestId: { description: "The request's id, also in error bodies as request_id", schema: { type: "string" } } },
      securitySchemes: {
        ApiKey: { type: "http", scheme: "bearer", description: "An API key: `Authorization: Bearer <key>`" },
        AnthropicApiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "An API key in Anthropic's header (any /v1 route)" },
        GoogleApiKey: { type: "apiKey", in: "header", name: "x-goog-api-key", description: "An API key in Google's header (the /v1beta Gemini routes)" },
        GoogleApiKeyQuery: { type: "apiKey", in: "query", name: "key", description: "An API key as Google's `?key=` (the /v1beta Gemini routes)" },
        AdminToken: { type: "http", scheme: "bearer", description: "An admin token (`gateway admin token create`), with the scope each route names" },
        DashboardSession: { type: "apiKey", in: "cookie", name: SESSION_COOKIE, description: "The dashboard session cookie (POST /dashboard/api/signin)" },
        CsrfToken: { type: "apiKey", in: "header", name: "x-csrf-token", description: "The session's csrf_token, on every write" },
        MetricsToken: { type: "http", scheme: "bearer", description: "The metrics token (metrics.token_env)" },
      },
    },
  };
}
