// Small runtime guards for client and upstream JSON, so converters can narrow `unknown` without `any`.

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isString(value: unknown): value is string {
  return typeof value === "string";
}

export function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Parses a tool-call arguments string into an object; anything else (invalid JSON, arrays, scalars) becomes {}. */
export function parseJsonObject(text: string | undefined | null): { value: JsonObject; ok: boolean } {
  if (text === undefined || text === null || text.trim() === "") return { value: {}, ok: true };
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? { value: parsed, ok: true } : { value: {}, ok: false };
  } catch {
    return { value: {}, ok: false };
  }
}

/** Collects warnings once each: a long conversation would otherwise repeat the same one per message. */
export class WarningList {
  private readonly seen = new Set<string>();
  add(message: string): void {
    this.seen.add(message);
  }
  toArray(): string[] {
    return [...this.seen];
  }
}
