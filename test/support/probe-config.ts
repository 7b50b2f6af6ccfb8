// A config with a routing group whose first deployment has an active health probe every 10 s
// (test/gateway/health-probes.test.ts, test/browser/health-probes.test.ts).
export function probeConfig(primaryUrl: string, backupUrl: string): string {
  return `
providers:
  primary: { type: openai, base_url: "${primaryUrl}/v1", keys: ["sk-primary-key-0001"], apis: [chat] }
  backup: { type: openai, base_url: "${backupUrl}/v1", keys: ["sk-backup-key-0002"], apis: [chat] }
models:
  - id: routed
    kind: chat
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
    deployments:
      - { name: first, provider: primary, health_check: { interval_s: 10, timeout_ms: 2000 } }
      - { name: second, provider: backup }
tiers:
  standard: { models: [routed] }
server:
  default_tier: standard
`;
}
