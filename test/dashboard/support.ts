// A dashboard API client with its own cookie jar and CSRF token, plus helpers to make accounts
// that can sign in. Each client is one browser: sign in, then call the API like the web UI does.
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import type { Account } from "../../src/store/accounts-store.js";
import type { TestGateway } from "../support/gateway.js";

export const PASSWORD = "correct horse battery staple";

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export class DashboardClient {
  cookie: string | null = null;
  csrf: string | null = null;

  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, body?: unknown, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf && method !== "GET") headers["x-csrf-token"] = csrf;
    if (body !== undefined) headers["content-type"] ??= "application/json";
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
    const setCookie = response.headers.get("set-cookie");
    if (setCookie) {
      const pair = setCookie.split(";")[0]!;
      this.cookie = pair.endsWith("=") ? null : pair;
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  get(path: string) {
    return this.request("GET", `/dashboard/api${path}`);
  }
  post(path: string, body: unknown = {}) {
    return this.request("POST", `/dashboard/api${path}`, body);
  }
  patch(path: string, body: unknown) {
    return this.request("PATCH", `/dashboard/api${path}`, body);
  }
  delete(path: string) {
    return this.request("DELETE", `/dashboard/api${path}`);
  }

  async signIn(email: string, password = PASSWORD): Promise<ApiResponse> {
    const response = await this.post("/signin", { email, password });
    if (response.status === 200) this.csrf = response.body.csrf_token;
    return response;
  }
}

/** An account with a password (and optionally admin), signed in through a fresh client. */
export async function signedInAccount(
  gateway: TestGateway,
  options: { admin?: boolean; balance?: string; email?: string } = {},
): Promise<{ account: Account; client: DashboardClient }> {
  const email = options.email ?? `dash-${Math.random().toString(36).slice(2)}@example.com`;
  const account = await gateway.app.ctx.store.accounts.create({
    email,
    tier: gateway.app.ctx.config.defaultTier,
    balance: parseUsd(options.balance ?? "25")!,
    isAdmin: options.admin ?? false,
    passwordHash: await hashPassword(PASSWORD),
  });
  const client = new DashboardClient(gateway.url);
  const response = await client.signIn(email);
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.text}`);
  return { account, client };
}

/** Asserts the catalogue's error contract: status, type, OpenAI shape and X-Request-ID. */
export function expectError(response: ApiResponse, status: number, type: string): void {
  const problems: string[] = [];
  if (response.status !== status) problems.push(`status ${response.status} != ${status}`);
  if (response.body?.error?.type !== type) problems.push(`type ${response.body?.error?.type} != ${type}`);
  if (!/^req_/.test(response.headers.get("x-request-id") ?? "")) problems.push("no x-request-id");
  if (response.body?.request_id !== response.headers.get("x-request-id")) problems.push("request_id differs from header");
  if (typeof response.body?.error?.message !== "string") problems.push("no message");
  if (problems.length) throw new Error(`${problems.join("; ")}: ${response.text}`);
}

export const GATEWAY_CONFIG = `
models: []
server:
  signup: open
`;
