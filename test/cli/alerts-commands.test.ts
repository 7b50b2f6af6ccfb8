// `gateway admin alerts ...` (issue 45): subscriptions added, listed, tested and removed from the CLI
// through the admin API's own validation, audited as the CLI actor; a running gateway on the same
// database delivers the CLI's test event, signed, and the CLI then shows it delivered. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertsConfig, signatureValid, startReceiver, waitFor, type Receiver } from "../alerts/support.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { createHarness, TEST_CONFIG, type CliHarness } from "./harness.js";

const CONFIG = `${TEST_CONFIG}\n${alertsConfig()}`;

interface Subscription {
  id: string;
  url: string;
  format: string;
  events: string[];
  enabled: boolean;
  workspace_id: string | null;
}
interface Delivery {
  event_type: string;
  status: string;
  attempts: number;
  last_status: number | null;
}

describe.each(DATABASE_KINDS)("gateway admin alerts, on %s", (kind) => {
  let cli: CliHarness;
  let gateway: TestGateway;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    cli = await createHarness(kind, CONFIG);
    gateway = await startGateway(CONFIG, { database: cli.database, env: { MOCK_SHARED_KEY: "sk-shared-0000" } });
  });
  afterAll(async () => {
    await gateway?.close();
    await cli?.close();
    await receiver?.close();
  });

  it("adds a subscription, shows its secret once, sends a signed test event and lists the delivery", async () => {
    const created = await cli.json<{ subscription: Subscription; secret: string }>([
      "admin",
      "alerts",
      "add",
      receiver.url,
      "--events",
      "budget.threshold,key.exhausted,budget.threshold",
      "--format",
      "json",
    ]);
    expect(created.subscription).toMatchObject({ url: receiver.url, format: "json", events: ["budget.threshold", "key.exhausted"], enabled: true, workspace_id: null });
    expect(created.secret.length).toBeGreaterThanOrEqual(32);

    const listed = await cli.json<Subscription[]>(["admin", "alerts", "list"]);
    expect(listed.map((s) => s.id)).toEqual([created.subscription.id]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    const text = await cli.run(["admin", "alerts", "list"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(receiver.url);

    const queued = await cli.json<{ event_id: string }>(["admin", "alerts", "test", created.subscription.id]);
    expect(queued.event_id).toMatch(/\S/);
    const got = await waitFor("the test event", () => receiver.received.find((r) => r.body.includes('"test"')));
    expect(signatureValid(created.secret, got.headers["x-gateway-signature"] as string | undefined, got.body)).toBe(true);
    expect(JSON.parse(got.body)).toMatchObject({ type: "test" });

    const delivered = await waitFor("the delivery recorded", async () => {
      const rows = await cli.json<Delivery[]>(["admin", "alerts", "deliveries", created.subscription.id, "--limit", "5"]);
      return rows.find((d) => d.event_type === "test" && d.status === "delivered");
    });
    expect(delivered).toMatchObject({ attempts: 1, last_status: 200 });

    const audit = await gateway.app.ctx.store.audit.list({ targetType: "alert_subscription", limit: 10 });
    expect(audit.map((a) => a.action)).toContain("alert_subscription.create");
    expect(audit.every((a) => a.actor.type === "cli")).toBe(true);
  });

  it("refuses an http:// endpoint to a host not allowed, an unknown event and a missing subscription", async () => {
    const badHost = await cli.run(["admin", "alerts", "add", "http://example.com/hook", "--events", "test"]);
    expect(badHost.code).not.toBe(0);
    expect(badHost.stderr).toContain("allowed_http_hosts");
    const badEvent = await cli.run(["admin", "alerts", "add", receiver.url, "--events", "no.such.event"]);
    expect(badEvent.code).not.toBe(0);
    const noEvents = await cli.run(["admin", "alerts", "add", receiver.url]);
    expect(noEvents.code).not.toBe(0);
    const missing = await cli.run(["admin", "alerts", "test", "as_missing"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("No alert subscription");
    const usage = await cli.run(["admin", "alerts", "frobnicate"]);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain("usage: gateway admin alerts");
  });

  it("removes a subscription, audited, and it is gone from the list", async () => {
    const [first] = await cli.json<Subscription[]>(["admin", "alerts", "list"]);
    const removed = await cli.json<{ id: string; deleted: boolean }>(["admin", "alerts", "remove", first!.id]);
    expect(removed).toEqual({ id: first!.id, deleted: true });
    expect(await cli.json<Subscription[]>(["admin", "alerts", "list"])).toEqual([]);
    const again = await cli.run(["admin", "alerts", "remove", first!.id]);
    expect(again.code).not.toBe(0);
    const audit = await gateway.app.ctx.store.audit.list({ targetType: "alert_subscription", limit: 10 });
    expect(audit.map((a) => a.action)).toContain("alert_subscription.delete");
  });
});
