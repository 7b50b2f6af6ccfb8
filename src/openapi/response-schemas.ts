// What the gateway answers, as zod schemas: the OpenAPI document's response schemas (document.ts)
// and, in test/openapi, the check of real responses against them. The gateway's own JSON (views,
// lists, errors) is described strictly (no unknown fields); the model routes' answers follow the
// upstream's wire format, so only the fields the gateway promises are required and others pass.
//
// This module gathers them: the shared views (response-schemas-common.ts) and those of each route
// family (response-schemas-v1.ts, -admin.ts, -dashboard.ts). Importers use it as `r`.
export { usdText } from "./response-schema-parts.js";
export * from "./response-schemas-common.js";
export * from "./response-schemas-v1.js";
export * from "./response-schemas-admin.js";
export * from "./response-schemas-dashboard.js";
