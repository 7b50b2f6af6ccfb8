// Reading a Chat message's `content` where the target format takes plain text only (system,
// assistant and tool turns): the same rule for every translator out of Chat.
import { invalidRequest } from "../../errors/catalogue.js";
import { isRecord, isString } from "./narrow.js";

/** A string, or text and refusal parts joined by newlines; any other part is refused naming its path. */
export function textOf(content: unknown, path: string): string {
  if (content === null || content === undefined) return "";
  if (isString(content)) return content;
  if (!Array.isArray(content)) throw invalidRequest(path, `${path} must be a string or an array of parts.`);
  return content
    .map((part, j) => {
      if (!isRecord(part)) throw invalidRequest(`${path}[${j}]`, `${path}[${j}] must be an object.`);
      if (part.type === "text" && isString(part.text)) return part.text;
      if (part.type === "refusal" && isString(part.refusal)) return part.refusal;
      throw invalidRequest(`${path}[${j}].type`, `${path}[${j}] must be a text part here.`);
    })
    .join("\n");
}
