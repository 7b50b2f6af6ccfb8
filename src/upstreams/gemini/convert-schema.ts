// JSON Schema (tool parameters, response_format json_schema) -> the OpenAPI 3.0 subset Gemini accepts.
// Gemini refuses a request whose schema holds a keyword outside that subset ($schema,
// additionalProperties, $ref, oneOf, const, ...), so only the listed keywords are kept, with two
// rewrites that keep the meaning: `const: "x"` becomes `enum: ["x"]`, and a type list with "null"
// (["string", "null"]) becomes the type plus `nullable: true`. Everything else is dropped and named
// in a warning.
import { isRecord, isString, type WarningList } from "../../wire/shared/narrow.js";
import type { GeminiSchema } from "../../wire/gemini/types.js";
import { GEMINI_SCHEMA_PLAIN_KEYWORDS as PLAIN_KEYWORDS } from "../../wire/gemini/schema-keywords.js";

export function convertSchema(schema: unknown, path: string, warnings: WarningList): GeminiSchema {
  if (!isRecord(schema)) return {};
  const out: GeminiSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === "type" && Array.isArray(value)) {
      const types = value.filter((t): t is string => isString(t) && t !== "null");
      if (types.length !== value.length) out.nullable = true;
      if (types.length === 1) out.type = types[0];
      else if (types.length > 1) out.anyOf = types.map((type) => ({ type }));
    } else if (PLAIN_KEYWORDS.has(keyword)) {
      out[keyword] = value;
    } else if (keyword === "const") {
      out.enum = [value];
    } else if (keyword === "properties" && isRecord(value)) {
      // The keys are property names, not keywords: each value is a schema.
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, convertSchema(property, `${path}.properties.${name}`, warnings)]));
    } else if (keyword === "items" && isRecord(value)) {
      out.items = convertSchema(value, `${path}.items`, warnings);
    } else if (keyword === "anyOf" && Array.isArray(value)) {
      out.anyOf = value.map((member, i) => convertSchema(member, `${path}.anyOf[${i}]`, warnings));
    } else {
      warnings.add(`${path}: schema keyword ${keyword} dropped (Gemini does not accept it)`);
    }
  }
  // Gemini's enum holds strings only (of a string type).
  if (out.enum !== undefined && !(Array.isArray(out.enum) && out.enum.every(isString))) {
    delete out.enum;
    warnings.add(`${path}: enum of non-string values dropped (Gemini accepts string enums only)`);
  } else if (out.enum !== undefined) {
    out.type ??= "string";
  }
  return out;
}
