// Gemini's Schema object (the OpenAPI 3.0 subset of functionDeclarations.parameters and
// generationConfig.responseSchema, types often upper case: "OBJECT") -> JSON Schema for a Chat
// upstream. Types become lower case, `nullable: true` becomes a type list with "null", and
// `propertyOrdering` (an ordering hint with no JSON Schema meaning) is left out. Keywords outside the
// subset are refused by name: the upstream would read them differently or not at all.
import { invalidRequest } from "../../errors/catalogue.js";
import { isRecord, isString, type JsonObject } from "../../wire/shared/narrow.js";
import { GEMINI_SCHEMA_PLAIN_KEYWORDS as PLAIN_KEYWORDS } from "../../wire/gemini/schema-keywords.js";

/** Deeper than this is not a tool's parameters. */
const MAX_DEPTH = 32;

export function convertGeminiSchema(schema: unknown, at: string, depth = 0): JsonObject {
  if (!isRecord(schema)) throw invalidRequest(at, `${at} must be a Schema object.`);
  if (depth > MAX_DEPTH) throw invalidRequest(at, `${at} is nested more than ${MAX_DEPTH} levels deep.`);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    const keyAt = `${at}.${key}`;
    if (key === "type") {
      if (!isString(value)) throw invalidRequest(keyAt, `${keyAt} must be a string.`);
      if (value.toUpperCase() !== "TYPE_UNSPECIFIED") out.type = value.toLowerCase();
    } else if (key === "nullable" || key === "propertyOrdering") {
      continue;
    } else if (key === "properties") {
      if (!isRecord(value)) throw invalidRequest(keyAt, `${keyAt} must be an object.`);
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, convertGeminiSchema(property, `${keyAt}.${name}`, depth + 1)]));
    } else if (key === "items") {
      out.items = convertGeminiSchema(value, keyAt, depth + 1);
    } else if (key === "anyOf") {
      if (!Array.isArray(value)) throw invalidRequest(keyAt, `${keyAt} must be an array.`);
      out.anyOf = value.map((item: unknown, i: number) => convertGeminiSchema(item, `${keyAt}[${i}]`, depth + 1));
    } else if (PLAIN_KEYWORDS.has(key)) {
      out[key] = value;
    } else {
      throw invalidRequest(keyAt, `${keyAt} is not a keyword of Gemini's Schema object.`);
    }
  }
  if (schema.nullable === true && isString(out.type)) out.type = [out.type, "null"];
  return out;
}
