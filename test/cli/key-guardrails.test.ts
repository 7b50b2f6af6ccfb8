// A key's guardrails through the admin CLI (docs/configuration.md, "Guardrails per key and
// workspace"): set at `keys create` and by `keys set-policy --guardrails`, `none` clearing them, and
// an unknown name refused with a message naming the field, nothing changed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, TEST_CONFIG, type CliHarness } from "./harness.js";

const CONFIG = `${TEST_CONFIG}
guardrails:
  - name: no-email
    kind: builtin
    patterns: [email]
    applies: selected
`;

interface KeyJson {
  id: string;
  policy: { guardrails: string[] };
}

describe("CLI key guardrails", () => {
  let cli: CliHarness;
  let accountId: string;

  beforeAll(async () => {
    cli = await createHarness("sqlite", CONFIG);
    accountId = (await cli.json<{ id: string }>(["admin", "accounts", "create", "--email", "guardrails-cli@example.com"])).id;
  });
  afterAll(async () => {
    await cli?.close();
  });

  it("sets, clears and refuses unknown names", async () => {
    const created = await cli.json<KeyJson>(["admin", "keys", "create", "--account", accountId, "--guardrails", "no-email"]);
    expect(created.policy.guardrails).toEqual(["no-email"]);
    const cleared = await cli.json<KeyJson>(["admin", "keys", "set-policy", created.id, "--guardrails", "none"]);
    expect(cleared.policy.guardrails).toEqual([]);
    const refused = await cli.run(["admin", "keys", "set-policy", created.id, "--guardrails", "no-email,nope"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/guardrails: the guardrail nope does not exist/);
    const listed = (await cli.json<KeyJson[]>(["admin", "keys", "list", "--account", accountId])).find((k) => k.id === created.id);
    expect(listed?.policy.guardrails).toEqual([]);
  });
});
