// `gateway admin users create|reset-password`: people who sign in to the dashboard. `create` makes an
// account without a password and prints its set-password link; `reset-password` prints a new link for
// an existing account, administrators included (the way back in for a locked-out administrator). The
// link is printed once (only its hash is stored) and works once, until server.password_link_ttl_hours.
import type { GatewayConfig } from "../../config/load.js";
import { createPerson, issuePasswordLink, passwordLinkView, type IssuedPasswordLink } from "../../admin/password-links.js";
import type { Account } from "../../store/accounts-store.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, requireOption, UsageError, type CliIo } from "../io.js";
import { accountJson } from "./accounts.js";
import { cliActor } from "./cli-actor.js";
import { gatewayUrl } from "./config.js";

const USAGE = "usage: gateway admin users create --email E [--admin] [--tier T] | reset-password (--email E | ID)";

/** The address the link names: server.public_url, else GATEWAY_URL, else http://HOST:PORT. */
function linkBase(config: GatewayConfig, env: NodeJS.ProcessEnv): string {
  return config.publicUrl ?? gatewayUrl(undefined, env);
}

function linkText(issued: IssuedPasswordLink, url: string): string {
  const expires = new Date(issued.link.expiresAt).toISOString();
  return `${url}\nSend this link to the person; it works once, until ${expires}, and is not shown again.`;
}

function emailOption(values: Record<string, string | boolean | undefined>): string {
  const email = requireOption(values, "email").trim().toLowerCase();
  if (email.length > 254 || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError(`--email: "${email}" is not an email address`);
  return email;
}

export async function usersCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
  switch (sub) {
    case "create": {
      const { values, json } = parseCommand(args, { email: { type: "string" }, admin: { type: "boolean" }, tier: { type: "string" } }, []);
      const email = emailOption(values);
      const tier = typeof values.tier === "string" ? values.tier : config.defaultTier;
      if (!config.tiers.has(tier)) throw new UsageError(`--tier: unknown tier "${tier}" (configured: ${[...config.tiers.keys()].join(", ")})`);
      const { account, issued } = await store.audited(cliActor(), (tx) => createPerson(tx, { email, tier, isAdmin: values.admin === true }, config.passwordLinkTtlMs));
      const link = passwordLinkView(issued, linkBase(config, io.env));
      return emit(io, json, { account: accountJson(account), password_link: link }, () =>
        [`created ${account.isAdmin ? "administrator" : "account"} ${account.id} (${account.email}) without a password; its set-password link:`, linkText(issued, link.url)].join(
          "\n",
        ),
      );
    }
    case "reset-password": {
      const byEmail = args.some((arg) => arg === "--email" || arg.startsWith("--email="));
      const { values, positionals, json } = parseCommand(args, { email: { type: "string" } }, byEmail ? [] : ["ID"]);
      let account: Account | null;
      if (positionals.length > 0) {
        account = await store.accounts.get(positionals[0]!);
        if (!account) throw new UsageError(`no account ${positionals[0]}`);
      } else {
        const email = emailOption(values);
        account = await store.accounts.getByEmail(email);
        if (!account) throw new UsageError(`no account with the email ${email}`);
      }
      const id = account.id;
      const issued = await store.audited(cliActor(), (tx) => issuePasswordLink(tx, id, config.passwordLinkTtlMs));
      const link = passwordLinkView(issued, linkBase(config, io.env));
      return emit(io, json, link, () =>
        [
          `${issued.link.purpose === "reset" ? "password reset" : "set-password"} link for ${account.email} (${account.id}); the current password keeps working until the link is used:`,
          linkText(issued, link.url),
        ].join("\n"),
      );
    }
    default:
      throw new UsageError(USAGE);
  }
}
