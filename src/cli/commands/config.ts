// `gateway admin config reload`: asks the running gateway to re-read its config file, through the
// admin API (POST /admin/v1/config/reload, scope config:write; decision 0021), so that the answer,
// a refusal's precise message included, comes back to the operator. Needs no database and no valid
// local config: the server reads its own file.
import { emit, parseCommand, UsageError, type CliIo } from "../io.js";

const RELOAD_TIMEOUT_MS = 30_000;

interface ReloadAnswer {
  status?: string;
  version?: string;
  previous_version?: string;
  loaded_at?: string;
  changes?: Record<string, string[]>;
  error?: { type?: string; message?: string };
}

export async function configCommand(sub: string | undefined, args: string[], io: CliIo): Promise<number> {
  if (sub !== "reload") throw new UsageError("usage: gateway admin config reload [--url URL] [--json]");
  const { values, json } = parseCommand(args, { url: { type: "string" } }, []);
  const token = io.env.GATEWAY_ADMIN_TOKEN?.trim();
  if (!token) throw new UsageError("GATEWAY_ADMIN_TOKEN must hold an admin token with the scope config:write (gateway admin token create --scope config:write)");
  const base = gatewayUrl(typeof values.url === "string" ? values.url : undefined, io.env);
  let response: Response;
  try {
    response = await fetch(`${base}/admin/v1/config/reload`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
      signal: AbortSignal.timeout(RELOAD_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    io.stderr(`gateway: cannot reach the gateway at ${base}: ${cause}\n`);
    return 1;
  }
  const text = await response.text();
  let answer: ReloadAnswer;
  try {
    answer = JSON.parse(text) as ReloadAnswer;
  } catch {
    io.stderr(`gateway: ${base} answered ${response.status} with a body that is not JSON\n`);
    return 1;
  }
  if (!response.ok) {
    if (json) emit(io, true, answer, () => "");
    io.stderr(`gateway: ${answer.error?.type ?? response.status}: ${answer.error?.message ?? text.slice(0, 500)}\n`);
    return 1;
  }
  emit(io, json, answer, () => describe(answer));
  return 0;
}

function describe(answer: ReloadAnswer): string {
  if (answer.status === "unchanged") return `config unchanged (version ${answer.version}, loaded ${answer.loaded_at})`;
  const changes = Object.entries(answer.changes ?? {})
    .filter(([, names]) => names.length > 0)
    .map(([kind, names]) => `  ${kind.replace("_", " ")}: ${names.join(", ")}`);
  return [`config reloaded: version ${answer.version} (was ${answer.previous_version}), loaded ${answer.loaded_at}`, ...changes].join("\n");
}

/** --url, else GATEWAY_URL, else the address `gateway serve` listens on (HOST and PORT; a wildcard host as loopback). */
export function gatewayUrl(option: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = option ?? env.GATEWAY_URL;
  if (given) {
    if (!/^https?:\/\/[^/]+/i.test(given)) throw new UsageError(`${option ? "--url" : "GATEWAY_URL"}: "${given}" is not an http(s) URL such as http://127.0.0.1:8080`);
    return given.replace(/\/+$/, "");
  }
  const host = !env.HOST || env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${env.PORT || "8080"}`;
}
