// One sample per built-in guardrail pattern, and near-misses that must pass (guardrails tests).
export const PATTERN_SAMPLES: ReadonlyArray<{ id: string; sample: string }> = [
  { id: "anthropic_key", sample: "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345" },
  { id: "openai_key", sample: "sk-proj-abcdefghijklmnopqrstuvwxyz012345" },
  { id: "aws_access_key", sample: "AKIAIOSFODNN7EXAMPLE" },
  { id: "google_api_key", sample: "AIzaSyA1234567890abcdefghijklmnopqrstuv" },
  { id: "github_token", sample: "ghp_abcdefghijklmnopqrstuvwxyz0123456789" },
  { id: "slack_token", sample: "xoxb-123456789012-abcdefghijkl" },
  { id: "stripe_key", sample: "sk_live_abcdefghijklmnopqrstuvwx" },
  { id: "private_key", sample: "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----" },
  { id: "credit_card", sample: "4111 1111 1111 1111" },
  { id: "email", sample: "jane.doe@example.com" },
  { id: "phone", sample: "+44 20 7946 0958" },
  { id: "iban", sample: "GB82 WEST 1234 5698 7654 32" },
];

/** Shapes without the checksum or the count: none is masked. */
export const NEAR_MISSES = ["4111 1111 1111 1112", "GB82 WEST 1234 5698 7654 33", "+12 345", "task-abcdefghijklmnopqrstuvwxyz", "version 2024-05-01 build 1234567"];
