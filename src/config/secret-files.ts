// Secrets by file: a variable the gateway reads (DATABASE_URL, GATEWAY_SECRET, a provider key named
// in the config file as ${VAR}, ...) may instead be given as NAME_FILE, the path of a file holding
// the value, as container orchestrators mount secrets. Resolved when the name is asked for, so a
// NAME_FILE the gateway never reads (SSL_CERT_FILE, say) is never opened.
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ConfigError } from "./gateway-config.js";

/** A secret is a key, a password or a URL: a bigger file is a wrong path, not a secret. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

const resolvedEnvironments = new WeakSet<object>();

/**
 * The environment with NAME answered from the file NAME_FILE names when NAME is unset (one trailing
 * newline dropped). Both set (NAME not empty) is an error, as is a file that cannot be read or is too big.
 */
export function withSecretFiles(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  if (resolvedEnvironments.has(env)) return env;
  const read = new Map<string, string>();
  const resolved = new Proxy(env, {
    get(target, name) {
      if (typeof name !== "string") return undefined;
      const direct = target[name];
      const fileVariable = `${name}_FILE`;
      const path = name.endsWith("_FILE") ? undefined : target[fileVariable];
      if (path === undefined || path === "") return direct;
      // Empty counts as unset: a Compose file passes `NAME: ${NAME:-}` through when nobody set it.
      if (direct !== undefined && direct !== "") throw new ConfigError(`${name} and ${fileVariable} are both set: set one of them`);
      let value = read.get(name);
      if (value === undefined) {
        value = readSecretFile(fileVariable, isAbsolute(path) ? path : resolve(cwd, path));
        read.set(name, value);
      }
      return value;
    },
  });
  resolvedEnvironments.add(resolved);
  return resolved;
}

function readSecretFile(variable: string, path: string): string {
  try {
    const size = statSync(path).size;
    if (size > MAX_SECRET_FILE_BYTES) throw new Error(`${size} bytes, more than ${MAX_SECRET_FILE_BYTES}`);
    return readFileSync(path, "utf8").replace(/\r?\n$/, "");
  } catch (error) {
    throw new ConfigError(`${variable}: ${path} cannot be read: ${(error as Error).message.split("\n")[0]}`);
  }
}
