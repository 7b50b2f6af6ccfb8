// Id helpers: translated objects get ids in the target format's style, derived from the upstream id when
// one exists so logs can be correlated, random otherwise.
import { randomUUID } from "node:crypto";

export function randomIdSuffix(): string {
  return randomUUID().replace(/-/g, "");
}

/** Replaces a known prefix (e.g. "chatcmpl-") with the target prefix (e.g. "msg_"). */
export function deriveId(sourceId: string | undefined, sourcePrefixes: readonly string[], targetPrefix: string): string {
  if (sourceId === undefined || sourceId === "") return targetPrefix + randomIdSuffix();
  for (const prefix of sourcePrefixes) {
    if (sourceId.startsWith(prefix)) return targetPrefix + sourceId.slice(prefix.length);
  }
  return targetPrefix + sourceId;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
