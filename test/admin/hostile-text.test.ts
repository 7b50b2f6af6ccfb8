// Hostile strings in every string field of every write route of the admin and dashboard APIs, taken
// from the OpenAPI document (so a new route is covered when it is described): a NUL, CR/LF, another
// control character and an unpaired surrogate are refused with 400 invalid_request naming the field
// and X-Request-ID, the same on SQLite and PostgreSQL (where a NUL was a 500), before anything is
// written; a right-to-left mark is no control character and never makes a 500 (issue 39, item 3).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { signedInAccount, type DashboardClient } from "../dashboard/support.js";

const REFUSED: ReadonlyArray<[string, string]> = [
  ["a NUL", "a\u0000b"],
  ["CR/LF", "a\r\nb"],
  ["an escape", "a\u001bb"],
  ["an unpaired surrogate", "a\ud800b"],
];

/**
 * Fields that carry a file's text (a route's fileTextFields: the price import's CSV or JSON), where
 * tabs and line breaks are the file's own; every other control character is refused there too.
 */
const FILE_TEXT_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ["/admin/v1/catalog/price-import", ["content"]],
  ["/dashboard/api/admin/catalog/price-import", ["content"]],
]);

interface SchemaObject {
  type?: string | string[];
  properties?: Record<string, SchemaObject>;
  anyOf?: SchemaObject[];
  oneOf?: SchemaObject[];
}
interface Operation {
  requestBody?: { content?: Record<string, { schema?: SchemaObject }> };
}

/** The top-level string fields of a JSON body schema. */
function stringFields(schema: SchemaObject | undefined): string[] {
  const takesString = (s: SchemaObject): boolean =>
    (Array.isArray(s.type) ? s.type.includes("string") : s.type === "string") || [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some(takesString);
  return Object.entries(schema?.properties ?? {})
    .filter(([, property]) => takesString(property))
    .map(([name]) => name);
}

describe.each(DATABASE_KINDS)("hostile text on the management APIs, on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let adminToken: string;
  let dashboard: DashboardClient;
  const writes: Array<{ method: string; path: string; fields: string[] }> = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    adminToken = (await gateway.app.ctx.store.adminTokens.create({ name: "hostile", scopes: ADMIN_SCOPES })).raw;
    dashboard = (await signedInAccount(gateway, { admin: true })).client;
    const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    for (const [path, operations] of Object.entries(document.paths)) {
      if (!path.startsWith("/admin/v1/") && !path.startsWith("/dashboard/api/")) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const fields = stringFields(operation.requestBody?.content?.["application/json"]?.schema);
        if (fields.length > 0) writes.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "x_hostile"), fields });
      }
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  async function send(method: string, path: string, body: unknown): Promise<{ status: number; requestId: string | null; error?: { type: string; param: string | null } }> {
    if (path.startsWith("/dashboard/api/")) {
      const answer = await dashboard.request(method, path, body);
      return { status: answer.status, requestId: answer.headers.get("x-request-id"), error: answer.body?.error };
    }
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const parsed = (await response.json()) as { error?: { type: string; param: string | null } };
    return { status: response.status, requestId: response.headers.get("x-request-id"), error: parsed.error };
  }

  async function counts(): Promise<number[]> {
    const db = gateway.app.ctx.store.db;
    const count = async (table: "ledger" | "audit_log" | "accounts" | "keys") =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return [await count("ledger"), await count("audit_log"), await count("accounts"), await count("keys")];
  }

  it("covers the write routes of both APIs", () => {
    expect(writes.filter((w) => w.path.startsWith("/admin/v1/")).length).toBeGreaterThanOrEqual(5);
    expect(writes.filter((w) => w.path.startsWith("/dashboard/api/")).length).toBeGreaterThanOrEqual(5);
  });

  it("refuses control characters and unpaired surrogates in every string field: 400 naming it, nothing written", async () => {
    const before = await counts();
    for (const { method, path, fields } of writes) {
      for (const field of fields) {
        for (const [name, value] of REFUSED) {
          if (name === "CR/LF" && FILE_TEXT_FIELDS.get(path)?.includes(field)) continue;
          const answer = await send(method, path, { [field]: value });
          const where = `${method} ${path} ${field} with ${name}`;
          expect(answer.status, where).toBe(400);
          expect(answer.error?.type, where).toBe("invalid_request");
          expect(answer.error?.param, where).toBe(field);
          expect(answer.requestId, where).toMatch(/^req_/);
        }
      }
    }
    expect(await counts()).toEqual(before);
  });

  it("keeps a file's line breaks in its text field, and refuses its other control characters", async () => {
    for (const [path, fields] of FILE_TEXT_FIELDS) {
      expect(
        writes.some((w) => w.path === path && fields.every((f) => w.fields.includes(f))),
        `${path} is described`,
      ).toBe(true);
      for (const field of fields) {
        const lines = await send("POST", path, { [field]: "model,input_per_mtok\r\ngpt-mock,2\n" });
        expect(lines.error?.param, `${path} ${field} with CR/LF`).not.toBe(field);
        const nul = await send("POST", path, { [field]: "model\u0000" });
        expect([nul.status, nul.error?.param], `${path} ${field} with a NUL`).toEqual([400, field]);
      }
    }
  });

  it("refuses them in a query and a path too", async () => {
    const search = await fetch(`${gateway.url}/admin/v1/accounts?q=%00`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(search.status).toBe(400);
    expect(((await search.json()) as { error: { param: string } }).error.param).toBe("q");
    const byId = await fetch(`${gateway.url}/admin/v1/accounts/acct%00x`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(byId.status).toBe(400);
  });

  it("never answers 500 to a right-to-left mark or a megabyte of text", async () => {
    for (const { method, path, fields } of writes) {
      for (const field of fields) {
        for (const value of ["\u202etxt.exe", "x".repeat(1_000_000)]) {
          const answer = await send(method, path, { [field]: value });
          expect(answer.status, `${method} ${path} ${field}`).toBeLessThan(500);
          expect(answer.requestId, `${method} ${path} ${field}`).toMatch(/^req_/);
        }
      }
    }
  });
});
