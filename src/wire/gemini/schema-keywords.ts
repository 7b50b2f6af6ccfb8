// The keywords of Gemini's Schema object (the OpenAPI 3.0 subset of function parameters and
// responseSchema) whose values are not themselves schemas: what both directions keep as they are
// (JSON Schema -> Gemini for a Gemini upstream, Gemini -> JSON Schema for a Gemini API client).
export const GEMINI_SCHEMA_PLAIN_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "propertyOrdering",
  "default",
  "minimum",
  "maximum",
]);
