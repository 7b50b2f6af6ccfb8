// Field readers shared by the client formats; each names the field it rejects.
import { invalidRequest } from "../../errors/catalogue.js";

export function readModelField(body: Record<string, unknown>): string {
  if (typeof body.model !== "string" || body.model.trim() === "") throw invalidRequest("model", "model is required and must be a string.");
  return body.model;
}

export function readStreamFlag(body: Record<string, unknown>): boolean {
  if (body.stream === undefined || body.stream === null) return false;
  if (typeof body.stream !== "boolean") throw invalidRequest("stream", "stream must be true or false.");
  return body.stream;
}

export function readOptionalPositiveInt(body: Record<string, unknown>, field: string): number | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw invalidRequest(field, `${field} must be a positive integer.`);
  return value;
}
