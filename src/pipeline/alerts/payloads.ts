// What an alert delivery sends (docs/api-contract.md, "Webhooks"): the generic JSON envelope, signed
// with the subscription's secret over "t.body" (X-Gateway-Signature: t=<unix>,v1=<hex HMAC-SHA256>),
// or a Slack incoming-webhook message ({"text": ...}) that says the same in one line.
import { createHmac } from "node:crypto";

export const SIGNATURE_HEADER = "x-gateway-signature";

export interface AlertEnvelope {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export function envelopeOf(event: { id: string; type: string; payload: string; createdAt: number }): AlertEnvelope {
  return { id: event.id, type: event.type, created_at: new Date(event.createdAt).toISOString(), data: JSON.parse(event.payload) as Record<string, unknown> };
}

/** The signature header's value for `body` sent at `unixSeconds`. */
export function signatureOf(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/** The body of a delivery in its subscription's format. */
export function bodyOf(format: "json" | "slack", envelope: AlertEnvelope): string {
  return format === "slack" ? JSON.stringify({ text: slackText(envelope) }) : JSON.stringify(envelope);
}

const text = (value: unknown): string => (typeof value === "string" || typeof value === "number" ? String(value) : "");

/** One line a person reads in a channel; the figures come from the event's data. */
export function slackText(envelope: AlertEnvelope): string {
  const d = envelope.data;
  switch (envelope.type) {
    case "budget.threshold":
      return `:warning: Budget ${text(d.scope)} reached ${text(d.threshold_percent)}% (${text(d.used)} of ${text(d.limit)} ${text(d.unit)}, period ${text(d.period)}).`;
    case "key.exhausted":
      return `:no_entry: Key ${text(d.key_id)} (account ${text(d.account_id)}) used up its cap of ${text(d.limit)} ${text(d.unit)}.`;
    case "balance.depleted":
      return `:no_entry: Account ${text(d.account_id)} has no prepaid balance left.`;
    case "provider_key.disabled":
      return `:electric_plug: Provider key ${text(d.key)} of ${text(d.provider)} was disabled (${text(d.reason)}).`;
    case "upstream.breaker_open":
      return `:rotating_light: Circuit breaker open for ${text(d.scope)}.`;
    case "config.changed":
      return `:gear: Config changed to version ${text(d.version)} (from ${text(d.previous_version)}).`;
    case "ledger.verify_failed":
      return `:rotating_light: Scheduled ledger verify failed: ${text(d.summary)}`;
    case "credit.added":
      return `:moneybag: Account ${text(d.account_id)} credited USD ${text(d.amount_usd)} (balance USD ${text(d.balance_usd)}).`;
    case "report.daily":
    case "report.weekly":
      return `:bar_chart: ${envelope.type === "report.daily" ? "Daily" : "Weekly"} spend of ${text(d.subject)} ${text(d.subject_id)}, ${text(d.from)} to ${text(d.to)}: USD ${text(d.spend_usd)} over ${text(d.requests)} requests.`;
    default:
      return `:bell: ${text(d.message) || envelope.type}`;
  }
}
