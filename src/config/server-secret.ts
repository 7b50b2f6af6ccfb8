// The server secret encrypts upstream keys at rest. GATEWAY_SECRET wins; otherwise one is created
// once under the data directory. Several processes sharing PostgreSQL must share GATEWAY_SECRET.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GatewayConfig } from "./load.js";

export function resolveServerSecret(config: Pick<GatewayConfig, "secret" | "dataDir">): string {
  if (config.secret) return config.secret;
  const path = join(config.dataDir, "gateway.secret");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  mkdirSync(config.dataDir, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: "wx" });
  return secret;
}
